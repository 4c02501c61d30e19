"""The HTML report of a run: one self-contained file (no network, no external asset,
inline CSS and script) that opens from disk or from a CI artifact.

Rendered from the report JSON (what ``--rdq-report`` writes) with Jinja2 templates
(``templates/``, autoescaped: every plugin-provided string is hostile). The causes come
first, each with its diff, its replay command and its failing tests folded under it;
then the requirements by family (suite), filterable without a server; then the text of
every clause cited.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from typing import Any

import jinja2

from ._causes import causes_headline
from ._clauses_text import clause_texts, spec_link
from ._diffview import diff_lines
from ._text import badge_label, badge_message, terminal_safe

__all__ = ["environment", "render_html", "verdict_reasons"]

_CLAUSE_ID = re.compile(r"C[0-9]+[a-z]?")
_REPLAY = re.compile(r"^replay: (.+)$", re.MULTILINE)
_FAILING = ("failed", "error")


@functools.cache
def environment() -> jinja2.Environment:
    """The templates' environment: autoescaped, undefined names an error."""
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("rdq_compliance.reporting", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["safe_text"] = lambda s: terminal_safe("" if s is None else str(s))
    env.filters["block_text"] = lambda s: terminal_safe("" if s is None else str(s),
                                                        one_line=False)
    env.filters["css_id"] = lambda s: re.sub(r"[^A-Za-z0-9_-]", "-", str(s))
    return env


def verdict_reasons(plugin: Mapping[str, Any], aborted: str | None = None) -> list[str]:
    """Why ``plugin`` got its verdict, in a few lines (the rule of ``plugin_verdict``)."""
    musts = [r for r in plugin["requirements"]
             if r["level"] == "MUST" and r["status"] != "not-applicable"]
    failing = [r["id"] for r in musts if r["status"] in _FAILING]
    if failing:
        return [f"{len(failing)} applicable MUST requirement(s) failed or errored: "
                + ", ".join(failing)]
    reasons = []
    if plugin["unavailable"] is not None:
        reasons.append(f"the plugin could not be opened: {plugin['unavailable']}")
    if aborted:
        reasons.append(f"the run stopped early: {aborted}")
    open_ = [r for r in musts if r["status"] != "passed"]
    if open_:
        shown = ", ".join(f"{r['id']} ({r['status']})" for r in open_[:8])
        more = f" and {len(open_) - 8} more" if len(open_) > 8 else ""
        reasons.append(f"{len(open_)} applicable MUST requirement(s) did not pass: "
                       f"{shown}{more}")
    if not reasons:
        reasons.append(f"every applicable MUST requirement ran and passed ({len(musts)})")
    return reasons


def _clause_ids(value: str | Sequence[str]) -> list[str]:
    return value.split() if isinstance(value, str) else [str(c) for c in value]


def _replay(messages: Sequence[str | None]) -> str | None:
    for m in messages:
        found = _REPLAY.search(m or "")
        if found:
            return found.group(1).strip()
    return None


def _cause_view(cause: Mapping[str, Any], plugin: Mapping[str, Any]) -> dict[str, Any]:
    tests = {t["nodeid"]: t for r in plugin["requirements"] for t in r["tests"]}
    members = [tests.get(n, {"nodeid": n, "message": None, "status": "failed"})
               for n in cause["tests"]]
    return {
        **cause,
        "clauses": _clause_ids(cause["clause"]),
        "diff": diff_lines(cause.get("example")),
        "replay": _replay([t.get("message") for t in members]),
        "members": members,
    }


def _families(plugin: Mapping[str, Any]) -> list[tuple[str, list[dict[str, Any]]]]:
    """The requirements by suite (their family), in the report's order."""
    out: dict[str, list[dict[str, Any]]] = {}
    for r in plugin["requirements"]:
        out.setdefault(str(r["suite"]), []).append(r)
    return list(out.items())


def html_context(report: Mapping[str, Any], *, spec_url: str | None = None,
                 home: str | None = None) -> dict[str, Any]:
    """What the templates show of ``report``. ``spec_url``: where the spec is published
    (default: the report's ``spec`` when absolute); ``home``: a link back (the site)."""
    # A relative base (the report's default) gives no link: spec_link returns None.
    base = spec_url if spec_url is not None else str(report.get("spec") or "")
    texts = clause_texts()
    plugins = []
    cited: set[str] = set()
    for p in report["plugins"]:
        causes = [_cause_view(c, p) for c in p.get("causes") or []]
        for r in p["requirements"]:
            cited.update(_clause_ids(r["clauses"]))
        for c in causes:
            cited.update(c["clauses"])
        plugins.append({
            **p,
            "why": verdict_reasons(p, report.get("aborted")),
            "cause_views": causes,
            "headline": causes_headline(causes) if causes else "",
            "families": _families(p),
        })
    known = [c for c in cited if _CLAUSE_ID.fullmatch(c) and c in texts]
    known.sort(key=lambda c: (int(re.sub("[a-z]", "", c[1:])), c))
    return {
        "report": report,
        "title": f"{badge_label(report)}: {badge_message(report)}",
        "label": badge_label(report),
        "message": badge_message(report),
        "plugins": plugins,
        "clauses": [texts[c] for c in known],
        "clause_titles": {c: texts[c].title for c in known},
        "clause_href": lambda c: spec_link(base, c),
        "has_clause": lambda c: c in texts,
        "home": home,
        "families": sorted({f for p in plugins for f, _ in p["families"]}),
    }


def render_html(report: Mapping[str, Any], *, spec_url: str | None = None,
                home: str | None = None) -> str:
    """The HTML report of ``report`` (the object ``--rdq-report`` writes)."""
    template = environment().get_template("report.html.j2")
    return template.render(html_context(report, spec_url=spec_url, home=home))
