"""The Markdown summary of a report (fit for ``$GITHUB_STEP_SUMMARY``).

Plugin-provided text goes into table cells escaped (``| < > & ` *`` and line
breaks) and failure messages into fenced code blocks whose fence is longer than
any backtick run in the message, so no text can close a block, break a table or
inject HTML.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ._text import badge_label, badge_message, terminal_safe

__all__ = ["md_cell", "md_code_block", "render_markdown"]

_CELL_ESCAPES = {
    "&": "&amp;", "<": "&lt;", ">": "&gt;", "|": "&#124;", "`": "&#96;", "\\": "&#92;",
    "*": "&#42;", "_": "&#95;", "[": "&#91;", "]": "&#93;", "#": "&#35;", "!": "&#33;",
    "~": "&#126;",
}
_CELL_RE = re.compile("[" + re.escape("".join(_CELL_ESCAPES)) + "]")


def md_cell(text: object) -> str:
    """``text`` as inert inline Markdown: one line, every markup character an entity."""
    s = terminal_safe("" if text is None else str(text))
    return _CELL_RE.sub(lambda m: _CELL_ESCAPES[m.group()], s)


def md_code_block(text: str) -> str:
    """A fenced code block that ``text`` cannot close (CommonMark: a closing fence
    must be at least as long as the opening one)."""
    body = terminal_safe(text, one_line=False)
    longest = max((len(run) for run in re.findall("`+", body)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}text\n{body}\n{fence}"


def _seconds(ms: int) -> str:
    return f"{ms / 1000:.1f} s"


def render_markdown(report: Mapping[str, Any]) -> str:
    verdict = str(report["verdict"])
    out = [
        f"## {md_cell(badge_label(report))}: **{md_cell(badge_message(report))}**",
        "",
        "| plugin | declared as | version | envelope versions | capabilities | verified "
        "| verdict |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for p in report["plugins"]:
        declared = p["name"] if p["name"] is not None else f"not opened: {p['unavailable']}"
        out.append(
            f"| {md_cell(p['label'])} | {md_cell(declared)} | {md_cell(p['version'] or '')} "
            f"| {md_cell(', '.join(map(str, p['envelope_versions'])))} "
            f"| {md_cell(', '.join(p['capabilities']) or 'none')} "
            f"| {md_cell(', '.join(p['capabilities_verified']) or 'none')} "
            f"| **{md_cell(p['verdict'])}** |"
        )
    facts = [
        f"kit {md_cell(report['kit_version'])}",
        f"fixtures {md_cell(report['fixture_hash'])}",
        f"profile {md_cell(report['profile'])}",
        f"seed {md_cell(report['seed'])}",
        f"started {md_cell(report['started_at'])}",
        _seconds(report["duration_ms"]),
    ]
    out += ["", " · ".join(facts)]
    if report["aborted"]:
        out += ["", f"**The run stopped early:** {md_cell(report['aborted'])}"]
    for note in report.get("notes", ()):
        out += ["", f"Note: {md_cell(note)}"]
    if verdict != "compliant":
        out += ["", "A requirement counts only when it ran and passed: the verdict is "
                    f"**{verdict}**."]
    failures = []
    for p in report["plugins"]:
        out += [
            "",
            f"### Requirements: {md_cell(p['label'])}",
            "",
            "| requirement | level | status | clauses | suite | title | note |",
            "| --- | --- | --- | --- | --- | --- | --- |",
        ]
        for r in p["requirements"]:
            note = r["reason"] or ""
            if r["known_failure"]:
                note = ("known failure; " + note).rstrip("; ")
            out.append(
                f"| {md_cell(r['id'])} | {md_cell(r['level'])} | {md_cell(r['status'])} "
                f"| {md_cell(' '.join(r['clauses']))} | {md_cell(r['suite'])} "
                f"| {md_cell(r['title'])} | {md_cell(note)} |"
            )
            if r["status"] in ("failed", "error"):
                failures.append((p, r))
    if failures:
        out += ["", "### Failures"]
        for p, r in failures:
            out += [
                "",
                f"#### {md_cell(r['id'])} ({md_cell(r['level'])}, "
                f"{md_cell(' '.join(r['clauses']))}) · {md_cell(p['label'])} · "
                f"{md_cell(r['status'])}",
                "",
                md_code_block(r["first_failure"] or "(no message)"),
            ]
    return "\n".join(out) + "\n"
