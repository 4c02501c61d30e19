"""The SVG badge and the shields.io endpoint JSON of a report."""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping
from typing import Any

from ._text import badge_label, badge_message, plain, xml_safe

__all__ = ["COLORS", "badge_text", "render_badge", "render_endpoint"]

COLORS = {
    "compliant": ("#4c1", "brightgreen"),
    "non-compliant": ("#e05d44", "red"),
    "incomplete": ("#9f9f9f", "lightgrey"),
}

# Approximate advance widths of Verdana 11px (what shields badges use). Unknown
# characters count as wide so that text never overflows its box.
_NARROW = dict.fromkeys("ijl.,:;!|'`Iíìï ", 3.8) | dict.fromkeys("frt()[]{}/\\-\"", 4.9)
_WIDE = dict.fromkeys("mwMW%@", 10.5) | dict.fromkeys("ABCDEFGHKNOPQRSUVXYZ&#", 7.8)
_DEFAULT = 7.0


def text_width(text: str) -> float:
    width = 0.0
    for ch in text:
        if ch in _NARROW:
            width += _NARROW[ch]
        elif ch in _WIDE:
            width += _WIDE[ch]
        elif unicodedata.combining(ch):
            continue
        elif unicodedata.east_asian_width(ch) in ("W", "F") or ord(ch) > 0xFFFF:
            width += 12.0
        else:
            width += _DEFAULT
    return width


def _plugin_title(report: Mapping[str, Any]) -> str:
    parts = []
    for p in report["plugins"]:
        declared = p["name"] if p["name"] is not None else "not opened"
        version = f" {p['version']}" if p["version"] else ""
        parts.append(f"{p['label']} ({declared}{version}): {p['verdict']}")
    return "; ".join(parts)


DEFAULT_PROFILE = "ci"
"""The profile a badge need not name: any other (``quick``, ``thorough``) is shown, so
that a quick run never yields the badge of a ci run."""


def badge_text(report: Mapping[str, Any]) -> tuple[str, str]:
    """(label, message) of the badge: the message names the profile unless it is ci."""
    message = badge_message(report)
    profile = str(report.get("profile") or "")
    if profile != DEFAULT_PROFILE:
        message += f" · {profile or 'no'} profile"
    return plain(badge_label(report)), plain(message)


def _provenance(report: Mapping[str, Any]) -> str:
    """``kit 0.1.0, corpus sha256:…, profile quick, 2026-12-03``: what the badge attests."""
    return (f"kit {report.get('kit_version')}, corpus {report.get('fixture_hash')}, "
            f"profile {report.get('profile')}, {str(report.get('started_at', ''))[:10]}")


def render_badge(report: Mapping[str, Any]) -> str:
    """A self-contained shields-style SVG (no scripts, no external references). Its
    title (the tooltip) names the plugins, the kit version, the corpus hash and the date."""
    label, message = badge_text(report)
    fill = COLORS[str(report["verdict"])][0]
    lw = round(text_width(label) + 10)
    mw = round(text_width(message) + 10)
    w = lw + mw
    title = f"{label}: {message}"
    plugins = _plugin_title(report)
    if plugins:
        title += f" ({plugins})"
    title += f"; {_provenance(report)}"
    el, em = xml_safe(label), xml_safe(message)
    lx, mx = lw * 5, lw * 10 + mw * 5  # text is drawn at scale(.1)
    llen, mlen = (lw - 10) * 10, (mw - 10) * 10
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="20" role="img" '
        f'aria-label="{el}: {em}">'
        f"<title>{xml_safe(title)}</title>"
        '<linearGradient id="s" x2="0" y2="100%"><stop offset="0" stop-color="#bbb" '
        'stop-opacity=".1"/><stop offset="1" stop-opacity=".1"/></linearGradient>'
        f'<clipPath id="r"><rect width="{w}" height="20" rx="3" fill="#fff"/></clipPath>'
        f'<g clip-path="url(#r)"><rect width="{lw}" height="20" fill="#555"/>'
        f'<rect x="{lw}" width="{mw}" height="20" fill="{fill}"/>'
        f'<rect width="{w}" height="20" fill="url(#s)"/></g>'
        '<g fill="#fff" text-anchor="middle" font-family="Verdana,Geneva,DejaVu Sans,'
        'sans-serif" text-rendering="geometricPrecision" font-size="110">'
        f'<text aria-hidden="true" x="{lx}" y="150" fill="#010101" fill-opacity=".3" '
        f'transform="scale(.1)" textLength="{llen}">{el}</text>'
        f'<text x="{lx}" y="140" transform="scale(.1)" fill="#fff" textLength="{llen}">{el}</text>'
        f'<text aria-hidden="true" x="{mx}" y="150" fill="#010101" fill-opacity=".3" '
        f'transform="scale(.1)" textLength="{mlen}">{em}</text>'
        f'<text x="{mx}" y="140" transform="scale(.1)" fill="#fff" textLength="{mlen}">{em}</text>'
        "</g></svg>\n"
    )


def render_endpoint(report: Mapping[str, Any]) -> dict[str, Any]:
    """The shields.io endpoint document (https://shields.io/badges/endpoint-badge); the
    message names the profile unless it is ci, as the SVG does."""
    label, message = badge_text(report)
    return {
        "schemaVersion": 1,
        "label": label,
        "message": message,
        "color": COLORS[str(report["verdict"])][1],
    }
