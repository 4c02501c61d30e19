"""The Markdown summary of a report (fit for ``$GITHUB_STEP_SUMMARY``).

Plugin-provided text goes into table cells escaped (``| < > & ` *`` and line
breaks) and failure messages into fenced code blocks whose fence is longer than
any backtick run in the message, so no text can close a block, break a table or
inject HTML.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from ._causes import SPEC_URL, causes_headline, clause_link, short_pointer
from ._clauses_text import clause_footer
from ._text import badge_label, badge_message, terminal_safe

__all__ = ["md_cell", "md_clause_links", "md_clauses", "md_code_block", "render_markdown"]

_CELL_ESCAPES = {
    "&": "&amp;", "<": "&lt;", ">": "&gt;", "|": "&#124;", "`": "&#96;", "\\": "&#92;",
    "*": "&#42;", "_": "&#95;", "[": "&#91;", "]": "&#93;", "#": "&#35;", "!": "&#33;",
    "~": "&#126;",
}
# An underscore between two letters or digits (``unknown_fields``) cannot open or close
# emphasis (CommonMark, intraword "_"): kept as is, so the raw file reads well too.
_CELL_RE = re.compile("[" + re.escape("".join(_CELL_ESCAPES)) + "]")


def _escape(m: re.Match[str]) -> str:
    text, i = m.string, m.start()
    if m.group() == "_" and 0 < i < len(text) - 1 and (
        text[i - 1].isalnum() and text[i + 1].isalnum()
    ):
        return "_"
    return _CELL_ESCAPES[m.group()]


def md_cell(text: object) -> str:
    """``text`` as inert inline Markdown: one line, every markup character an entity
    (but an intraword underscore, which is inert already)."""
    s = terminal_safe("" if text is None else str(text))
    return _CELL_RE.sub(_escape, s)


_CLAUSE_ID = re.compile(r"C[0-9]+[a-z]?")


def md_clauses(clauses: str | list[str]) -> str:
    """Clause ids as shortcut reference links, ``[C3]``: short in the raw text, a link
    once rendered with the definitions of :func:`md_clause_links` below the summary."""
    ids = clauses.split() if isinstance(clauses, str) else list(clauses)
    return " ".join(f"[{c}]" if _CLAUSE_ID.fullmatch(c) else md_cell(c) for c in ids)


def md_clause_links(clauses: Iterable[str], base: str = SPEC_URL) -> list[str]:
    """The link reference definitions of ``clauses``: ``[C3]: docs/spec/…#c3``."""
    found = sorted({c for c in clauses if _CLAUSE_ID.fullmatch(c)},
                   key=lambda c: (int(re.sub("[a-z]", "", c[1:])), c))
    return [f"[{c}]: {clause_link(c, base)}" for c in found]


def md_code_block(text: str) -> str:
    """A fenced code block that ``text`` cannot close (CommonMark: a closing fence
    must be at least as long as the opening one)."""
    body = terminal_safe(text, one_line=False)
    longest = max((len(run) for run in re.findall("`+", body)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}text\n{body}\n{fence}"


def _seconds(ms: int) -> str:
    return f"{ms / 1000:.1f} s"


def _md_cause(c: Mapping[str, Any]) -> str:
    """``/created_at`` instant changed by -117 ms [C3] → RDQ-RT-007 (207 failed), every
    plugin-influenced part escaped, the pointer in a code span it cannot close."""
    pointer = short_pointer(str(c["pointer"]))
    longest = max((len(run) for run in re.findall("`+", pointer)), default=0)
    tick = "`" * (longest + 1)
    pad = " " if pointer.startswith("`") or pointer.endswith("`") else ""
    others = len(c["pointers"]) - 1
    more = f" (and {others} other field{'s' if others != 1 else ''})" if others > 0 else ""
    where = f"{tick}{pad}{terminal_safe(pointer)}{pad}{tick}{more} " if pointer != "/" else ""
    return (f"{where}{md_cell(c['summary'])} "
            f"{md_clauses(c['clause'])} → **{md_cell(c['requirement'])}** "
            f"({c['failures']} failed)")


def render_markdown(report: Mapping[str, Any]) -> str:
    verdict = str(report["verdict"])
    base = str(report.get("spec") or SPEC_URL)
    out = [
        f"## {md_cell(badge_label(report))}: **{md_cell(badge_message(report))}**",
        "",
        "| plugin | declared as | version | envelope versions | capabilities | verified "
        "| verdict |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for p in report["plugins"]:
        declared = p["name"] if p["name"] is not None else p["unavailable"] or "not opened"
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
            if r.get("explained_by"):
                note = (f"explained by cause {r['explained_by']}; " + note).rstrip("; ")
            out.append(
                f"| {md_cell(r['id'])} | {md_cell(r['level'])} | {md_cell(r['status'])} "
                f"| {md_clauses(r['clauses'])} | {md_cell(r['suite'])} "
                f"| {md_cell(r['title'])} | {md_cell(note)} |"
            )
            if r["status"] in ("failed", "error"):
                failures.append((p, r))
    for p in report["plugins"]:
        causes = p.get("causes") or []
        if not causes:
            continue
        out += ["", f"### Root causes: {md_cell(p['label'])}", "",
                f"{md_cell(causes_headline(causes, p.get('failures')))}:", ""]
        for n, c in enumerate(causes, start=1):
            out.append(f"{n}. {_md_cause(c)}")
    if failures:
        out += ["", "### Failures"]
        for p, r in failures:
            out += [
                "",
                f"#### {md_cell(r['id'])} ({md_cell(r['level'])}, "
                f"{md_clauses(r['clauses'])}) · {md_cell(p['label'])} · "
                f"{md_cell(r['status'])}",
                "",
                md_code_block(r["first_failure"] or "(no message)"),
            ]
    used = [c for p in report["plugins"] for r in p["requirements"] for c in r["clauses"]]
    used += [c for p in report["plugins"] for k in p.get("causes") or []
             for c in str(k["clause"]).split()]
    out += clause_footer(used, base)
    return "\n".join(out) + "\n"
