"""What changed between two reports: per plugin, each requirement and root cause.

A requirement moves between *tested* outcomes (passed; failed or error: failing) and
*untested* ones (skipped, not-run) or not-applicable. The classes, from the reviewer's
question "what did this change do?":

- ``new regression``: failing now, not failing before (a requirement, or a cause not seen
  before);
- ``fixed``: failing before, passing now (a cause seen before and gone now);
- ``still failing``: failing in both (a cause in both);
- ``newly not run``: tested before (passed or failing), skipped or not run now;
- ``newly not applicable``: applicable before, not applicable now;
- ``newly passing``: passing now after being untested or not applicable before.

Anything else (passed in both, untested in both, …) is unchanged and not listed. Plugins
are matched by label. Differences of kit version, fixture corpus, profile or seed are
listed as ``caveats``: the two runs did not test the same things.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ._causes import cause_line
from ._markdown import md_cell
from ._text import terminal_safe

__all__ = ["CLASSES", "Change", "ReportDiff", "diff_markdown", "diff_reports", "diff_text"]

NEW, FIXED, STILL = "new regression", "fixed", "still failing"
NOT_RUN, NOT_APPLICABLE, PASSING = "newly not run", "newly not applicable", "newly passing"
CLASSES = (NEW, FIXED, STILL, NOT_RUN, NOT_APPLICABLE, PASSING)
"""Every class, in the order they are shown (most urgent first)."""

_FAILING = {"failed", "error"}
_UNTESTED = {"skipped", "not-run"}


@dataclass(frozen=True)
class Change:
    kind: str
    """One of :data:`CLASSES`."""
    plugin: str
    subject: str
    """A requirement id, or a cause's line (``/created_at instant changed … → RDQ-RT-007``)."""
    level: str | None
    """MUST or SHOULD for a requirement; None for a cause."""
    old: str
    new: str
    """The statuses (a requirement) or the failure counts (a cause: "absent" when none)."""


@dataclass
class ReportDiff:
    changes: list[Change] = field(default_factory=list)
    caveats: list[str] = field(default_factory=list)
    """Why the two reports are not strictly comparable (kit, corpus, profile, seed, plugins)."""
    old_verdict: str = ""
    new_verdict: str = ""

    def of(self, kind: str) -> list[Change]:
        return [c for c in self.changes if c.kind == kind]

    @property
    def regressed(self) -> bool:
        """A requirement or cause newly failing, or a MUST requirement newly not run."""
        return any(c.kind == NEW or (c.kind == NOT_RUN and c.level == "MUST")
                   for c in self.changes)


def _requirement_class(old: str, new: str) -> str | None:
    if new in _FAILING:
        return STILL if old in _FAILING else NEW
    if old in _FAILING and new == "passed":
        return FIXED
    if new in _UNTESTED and (old == "passed" or old in _FAILING):
        return NOT_RUN
    if new == "not-applicable" and old != "not-applicable":
        return NOT_APPLICABLE
    if new == "passed" and old != "passed":
        return PASSING
    return None


def _cause_key(c: Mapping[str, Any]) -> tuple[str, ...]:
    """One defect in both reports: its signature (which pointer a run shows first may
    change with the tests that failed); a report without one, its pointer, kind, clause."""
    if c.get("signature"):
        return (str(c["signature"]),)
    return str(c["pointer"]), str(c["kind"]), str(c["clause"])


def _caveats(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    found = []
    for key, what in (("kit_version", "kit version"), ("fixture_hash", "fixture corpus"),
                      ("profile", "profile"), ("seed", "seed")):
        if old.get(key) != new.get(key):
            found.append(f"different {what}: {old.get(key)!r} → {new.get(key)!r}")
    for p_old in old["plugins"]:
        match = next((p for p in new["plugins"] if p["label"] == p_old["label"]), None)
        if match is None:
            found.append(f"plugin {p_old['label']!r} is only in the old report")
        elif (p_old["name"], p_old["version"]) != (match["name"], match["version"]):
            found.append(f"plugin {p_old['label']!r}: {p_old['name']} {p_old['version']} → "
                         f"{match['name']} {match['version']}")
    for p_new in new["plugins"]:
        if not any(p["label"] == p_new["label"] for p in old["plugins"]):
            found.append(f"plugin {p_new['label']!r} is only in the new report")
    return found


def diff_reports(old: Mapping[str, Any], new: Mapping[str, Any]) -> ReportDiff:
    """The changes from ``old`` to ``new`` (both verified reports)."""
    out = ReportDiff(caveats=_caveats(old, new), old_verdict=str(old["verdict"]),
                     new_verdict=str(new["verdict"]))
    for p_new in new["plugins"]:
        label = str(p_new["label"])
        p_old = next((p for p in old["plugins"] if p["label"] == label), None)
        if p_old is None:
            continue
        before = {r["id"]: r for r in p_old["requirements"]}
        for r in p_new["requirements"]:
            old_status = before[r["id"]]["status"] if r["id"] in before else "not-run"
            kind = _requirement_class(old_status, r["status"])
            if kind is not None:
                out.changes.append(Change(kind, label, r["id"], r["level"], old_status,
                                          r["status"]))
        old_causes = {_cause_key(c): c for c in p_old.get("causes") or []}
        new_causes = {_cause_key(c): c for c in p_new.get("causes") or []}
        for key, c in new_causes.items():
            was = old_causes.get(key)
            line = cause_line(c, code="")
            count = "absent" if was is None else str(was["failures"])
            out.changes.append(Change(NEW if was is None else STILL, label, line, None, count,
                                      str(c["failures"])))
        for key, c in old_causes.items():
            if key not in new_causes:
                out.changes.append(Change(FIXED, label, cause_line(c, code=""), None,
                                          str(c["failures"]), "absent"))
    order = {k: i for i, k in enumerate(CLASSES)}
    out.changes.sort(key=lambda c: (order[c.kind], c.plugin, c.level is None))
    return out


def _what(c: Change) -> str:
    if c.level is None:
        return f"cause {c.subject} ({c.old} → {c.new} failed tests)"
    return f"{c.subject} ({c.level}) {c.old} → {c.new}"


def diff_text(d: ReportDiff) -> list[str]:
    """Terminal lines: a headline, then each class with its changes."""
    counts = ", ".join(f"{len(d.of(k))} {k}" for k in CLASSES if d.of(k)) or "no change"
    lines = [f"changes: verdict {d.old_verdict} → {d.new_verdict}; {counts}"]
    lines += [f"  note: {terminal_safe(c)}" for c in d.caveats]
    for kind in CLASSES:
        for c in d.of(kind):
            lines.append(f"  {kind.upper()} [{terminal_safe(c.plugin)}] "
                         f"{terminal_safe(_what(c))}")
    return lines


def diff_markdown(d: ReportDiff, *, baseline: str) -> str:
    """A Markdown section of the changes against ``baseline`` (a name for the old report)."""
    out = [f"### Changes since {md_cell(baseline)}", "",
           f"Verdict **{md_cell(d.old_verdict)}** → **{md_cell(d.new_verdict)}**."]
    out += ["", *(f"- Note: {md_cell(c)}" for c in d.caveats)] if d.caveats else []
    if not d.changes:
        out += ["", "No requirement or cause changed."]
    else:
        out += ["", "| change | plugin | what |", "| --- | --- | --- |"]
        out += [f"| **{md_cell(c.kind)}** | {md_cell(c.plugin)} | {md_cell(_what(c))} |"
                for c in d.changes]
    return "\n".join(out) + "\n"
