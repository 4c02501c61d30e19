"""Making plugin-provided text safe for a terminal, XML and Markdown.

Plugin names, versions, skip reasons and failure messages come from the code
under test (or from a testee's stdout): treat every byte of them as hostile.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

__all__ = [
    "badge_label",
    "badge_message",
    "plain",
    "terminal_safe",
    "verified_capabilities",
    "xml_safe",
]

# C0 and C1 controls, DEL, and the bidirectional overrides/isolates that can make a
# terminal line read differently from what it holds (Trojan Source).
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_NEWLINES = re.compile(r"\r\n|[\r\n\t\v\f\u2028\u2029]")
# What XML 1.0 cannot hold at all (even escaped): other controls, surrogates, U+FFFE/F.
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def terminal_safe(text: str, *, one_line: bool = True) -> str:
    """``text`` without control characters (ESC included); with ``one_line``,
    line breaks become spaces, else they are kept as ``\\n``."""
    if one_line:
        return _CONTROLS.sub("", _NEWLINES.sub(" ", text))
    lines = re.split("\r\n|[\r\n\v\f\u2028\u2029]", text)
    return "\n".join(_CONTROLS.sub("", line.replace("\t", "    ")) for line in lines)


def plain(text: str) -> str:
    """One line, no controls, nothing XML cannot carry."""
    return _NOT_XML.sub("", terminal_safe(text))


def xml_safe(text: str) -> str:
    """``text`` as XML character data or attribute value (quotes escaped too)."""
    return (
        plain(text)
        .replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace('"', "&quot;")
        .replace("'", "&apos;")
    )


def _versions(report: Mapping[str, Any]) -> list[int]:
    opened = [set(p["envelope_versions"]) for p in report["plugins"] if p["name"] is not None]
    common = set.intersection(*opened) if opened else set()
    return sorted(common) or [1]


def badge_label(report: Mapping[str, Any]) -> str:
    """``rdq envelope v1``: the envelope versions every plugin under test declared."""
    return "rdq envelope " + "/".join(f"v{v}" for v in _versions(report))


def verified_capabilities(report: Mapping[str, Any]) -> list[str]:
    """Capabilities verified for every plugin of the report."""
    sets = [set(p["capabilities_verified"]) for p in report["plugins"]]
    return sorted(set.intersection(*sets)) if sets else []


def badge_message(report: Mapping[str, Any]) -> str:
    """The verdict, plus the verified capabilities of a compliant run."""
    verdict = str(report["verdict"])
    caps = verified_capabilities(report) if verdict == "compliant" else []
    upgraded = report.get("upgraded_from")
    return " · ".join([verdict, *caps, *([f"upgrade from {upgraded}"] if upgraded else [])])
