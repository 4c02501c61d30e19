"""GitHub Actions output of a report: workflow-command annotations, a summary that fits.

- :func:`github_annotations` turns a report's failures into annotations, most important first:
  a root cause of an unexcused MUST failure, then a failed MUST requirement no cause
  explains, an untested plugin (verdict incomplete), SHOULD failures (warnings) and
  known failures (notices). Each names the requirement, the cause and the command that
  replays it.
- :func:`workflow_commands` renders them as ``::error title=…::message`` lines within
  GitHub's limits: it shows 10 annotations of each level per step, so at most 10 are
  emitted per level and the last one says how many more there are.
- :func:`fit_summary` keeps a Markdown summary under GitHub's 1 MiB step-summary limit.

Escaping follows the runner (actions/toolkit ``command.ts``): in the message ``%``, CR
and LF; in a property also ``:`` and ``,``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ._causes import cause_line

__all__ = [
    "MAX_PER_LEVEL",
    "SUMMARY_LIMIT",
    "Annotation",
    "escape_data",
    "escape_property",
    "fit_summary",
    "github_annotations",
    "workflow_commands",
]

MAX_PER_LEVEL = 10
"""GitHub shows 10 error, 10 warning and 10 notice annotations per step."""
SUMMARY_LIMIT = 1024 * 1024
"""GitHub rejects a step summary over 1 MiB."""

Level = Literal["error", "warning", "notice"]
_LEVELS: tuple[Level, ...] = ("error", "warning", "notice")


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


@dataclass(frozen=True)
class Annotation:
    level: Level
    title: str
    message: str

    def command(self) -> str:
        return f"::{self.level} title={escape_property(self.title)}::{escape_data(self.message)}"


def _first_line(text: str | None) -> str:
    for line in (text or "").splitlines():
        line = line.strip()
        # "rdq_compliance.testing._failures.CheckFailed: RDQ-…": the check's own words
        line = re.sub(r"^[\w.]+(?:Error|Failed|Exception): ", "", line)
        if line:
            return line[:300]
    return "(no message)"


def _replay(label: str, rid: str, tests: Sequence[str], replays: Mapping[str, str]) -> str:
    for nodeid in tests:
        if nodeid in replays:
            return f"replay: {replays[nodeid]}"
    # No saved case (not a generated example, or the report alone): select the tests.
    return f"rerun: pytest --rdq-plugin={label} -k {rid}"


def _plugin_annotations(p: Mapping[str, Any], replays: Mapping[str, str],
                        ) -> list[tuple[tuple[int, int], Annotation]]:
    label = str(p["label"])
    failing = {r["id"]: r for r in p["requirements"] if r["status"] in ("failed", "error")}
    found: list[tuple[tuple[int, int], Annotation]] = []

    def rank(rids: Sequence[str]) -> tuple[int, Level]:
        # A cause spans requirements: what decides is what is not a listed known failure.
        new = [failing[rid] for rid in rids if rid in failing and not failing[rid]["known_failure"]]
        if not new:
            return 4, "notice"
        if any(r["level"] == "MUST" for r in new):
            return 0, "error"
        return 3, "warning"

    explained: set[str] = set()
    for cause in p.get("causes") or []:
        rids = [str(r) for r in cause["requirements"]]
        explained.update(rids)
        order, level = rank(rids)
        rid = str(cause["requirement"])
        n = len(rids)
        line = cause_line(cause, code="")
        k = int(cause["failures"])
        message = (f"plugin {label!r}: {line}: {k} failed test{'s' if k != 1 else ''} in {n} "
                   f"requirement{'s' if n != 1 else ''} ({', '.join(rids[:6])}"
                   f"{', …' if n > 6 else ''})\n"
                   f"{_replay(label, rid, cause['tests'], replays)}")
        title = f"{rid} [{cause['clause']}] {cause['kind']} · {label}"
        found.append(((order, -int(cause["failures"])), Annotation(level, title, message)))
    for rid, r in failing.items():
        if rid in explained:
            continue
        order, level = rank([rid])
        failed = [t for t in r["tests"] if t["status"] in ("failed", "error")]
        message = (f"plugin {label!r}: {rid} {r['status']} [{' '.join(r['clauses'])}]: "
                   f"{_first_line(r['first_failure'])}\n"
                   f"{_replay(label, rid, [t['nodeid'] for t in failed], replays)}")
        title = f"{rid} ({r['level']}) {r['status']} · {label}"
        found.append(((order + 1 if order == 0 else order, -len(failed)),
                      Annotation(level, title, message)))
    if p["verdict"] == "incomplete":
        untested = [r["id"] for r in p["requirements"] if r["level"] == "MUST"
                    and r["status"] in ("skipped", "not-run")]
        reason = p["unavailable"] or next(
            (r["reason"] for r in p["requirements"] if r["id"] in untested and r["reason"]), "")
        n = len(untested)
        message = (f"plugin {label!r}: {n} MUST requirement{'s' if n != 1 else ''} not tested"
                   f"{': ' + str(reason) if reason else ''} ({', '.join(untested[:6])}"
                   f"{', …' if len(untested) > 6 else ''})")
        found.append(((2, 0), Annotation("error", f"incomplete · {label}", message)))
    return found


def github_annotations(report: Mapping[str, Any],
                replays: Mapping[str, str] | None = None) -> list[Annotation]:
    """Every annotation of the report, most important first. ``replays`` maps a test's
    node id to its replay command (the failure's ``replay:`` line), when known."""
    ranked = [a for p in report["plugins"] for a in _plugin_annotations(p, replays or {})]
    if report.get("aborted"):
        ranked.append(((1, 0), Annotation("error", "the run stopped early",
                                          f"the run stopped early: {report['aborted']}")))
    ranked.sort(key=lambda item: item[0])  # stable: plugins keep their order on ties
    return [a for _, a in ranked]


def workflow_commands(report: Mapping[str, Any], replays: Mapping[str, str] | None = None,
                      *, limit: int = MAX_PER_LEVEL) -> list[str]:
    """The annotations as workflow-command lines: at most ``limit`` per level, the last
    one shown saying how many more were left out."""
    found = github_annotations(report, replays)
    lines: list[str] = []
    for level in _LEVELS:
        mine = [a for a in found if a.level == level]
        shown = mine[:limit]
        if len(mine) > limit:
            more = len(mine) - limit
            last = shown[-1]
            shown[-1] = Annotation(level, last.title, f"{last.message}\n… and {more} more "
                                   f"{level}{'s' if more != 1 else ''}: see the job summary "
                                   "or the JSON report")
        lines += [a.command() for a in shown]
    return lines


_FENCE = re.compile(r"^(`{3,})")


def fit_summary(text: str, budget: int = SUMMARY_LIMIT) -> str:
    """``text`` if it fits in ``budget`` bytes (UTF-8), else its first lines, a code block
    left open closed again, and a note saying the summary was cut."""
    if len(text.encode("utf-8")) <= budget:
        return text
    note = (f"\n**This summary was cut to fit GitHub's step-summary limit "
            f"({SUMMARY_LIMIT // 1024} KiB): the JSON report (--rdq-report) has every "
            "result.**\n")
    room = budget - len(note.encode("utf-8")) - 64  # 64: a closing fence
    kept: list[str] = []
    used = 0
    fence: str | None = None
    for line in text.splitlines(keepends=True):
        size = len(line.encode("utf-8"))
        if used + size > room:
            break
        kept.append(line)
        used += size
        m = _FENCE.match(line)
        if m and fence is None:
            fence = m.group(1)
        elif m and fence is not None and line.strip() == fence:
            fence = None
    if fence is not None:
        kept.append(f"{fence}\n")
    return "".join(kept) + note
