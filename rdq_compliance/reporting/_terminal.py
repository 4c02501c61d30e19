"""The lines the kit prints at the end of a run (pytest_terminal_summary)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from ._causes import cause_line, causes_headline
from ._text import terminal_safe

__all__ = ["terminal_lines"]

_NOT_PASSED_SHOWN = 8
_CAUSES_SHOWN = 5


def terminal_lines(report: Mapping[str, Any], *, report_path: str | None = None,
                   replay: bool = False) -> list[str]:
    """Verdict per plugin, one line per suite, the causes of its failures, the failed
    requirements with their clauses (those only failing by a cause already named say
    so), and why an incomplete verdict is incomplete. Plugin text is sanitized.
    ``report_path``: where the JSON report was written (only then is it pointed at).
    ``replay``: the run replayed one saved case on purpose (``--rdq-replay``): the
    requirements it did not run are not listed (issue 21 §7)."""
    s = terminal_safe
    lines = [f"verdict: {str(report['verdict']).upper()}"]
    if replay:
        lines[0] += " (--rdq-replay ran one saved case; the other requirements were not run)"
    if report["aborted"]:
        lines.append(f"the run stopped early: {s(report['aborted'])}")
    if report.get("upgraded_from"):
        lines.append(f"upgrade check (C19): from release {s(report['upgraded_from'])}")
    lines.extend(f"note: {s(note)}" for note in report.get("notes", ()))
    for p in report["plugins"]:
        if p["name"] is None:
            what = s(p["unavailable"] or "not opened: no information from the kit")
        else:
            caps = ", ".join(p["capabilities"]) or "none"
            versions = ", ".join(f"v{v}" for v in p["envelope_versions"])
            what = (f"{s(p['name'])} {s(p['version'] or '')}, envelope {versions}, "
                    f"capabilities: {s(caps)}")
            if p["capabilities_verified"]:
                what += f" (verified: {s(', '.join(p['capabilities_verified']))})"
        lines.append(f"plugin {s(p['label'])} ({what}): {p['verdict']}")
        suites: dict[str, Counter[str]] = {}
        for r in p["requirements"]:
            c = suites.setdefault(r["suite"], Counter())
            for t in r["tests"]:
                # A test that does not apply is no skip: it never makes the verdict incomplete.
                # Counted as the report counts it: a requirement gated on a capability the
                # plugin does not declare is not applicable, its tests too (issue 21 §7).
                na = t.get("not_applicable") or (
                    r["status"] == "not-applicable" and t["status"] == "skipped")
                c["not applicable" if na else t["status"]] += 1
        width = max((len(name) for name in suites), default=0)
        for name, c in suites.items():
            counts = ", ".join(f"{c[k]} {k}" for k in ("passed", "failed", "skipped", "error"))
            if c["not applicable"]:
                counts += f", {c['not applicable']} not applicable"
            lines.append(s(f"  {name:<{width}}  {counts}"))
        causes = p.get("causes") or []
        if causes:
            lines.append(s(f"  {causes_headline(causes, p.get('failures'))}:"))
            for n, c in enumerate(causes[:_CAUSES_SHOWN], start=1):
                lines.append(s(f"    {n}. {cause_line(c, code='')} ({c['failures']} failed)"))
            if len(causes) > _CAUSES_SHOWN:
                rest = causes[_CAUSES_SHOWN:]
                where = (f"see \"causes\" in {report_path}" if report_path
                         else "run with --rdq-report=FILE to see them all")
                lines.append(s(f"    ... and {len(rest)} more causes of "
                               f"{sum(c['failures'] for c in rest)} failures ({where})"))
        for r in p["requirements"]:
            if r["status"] in ("failed", "error"):
                known = " (known failure)" if r["known_failure"] else ""
                why = (f" \u2014 explained by cause {r['explained_by']}"
                       if r.get("explained_by") else "")
                lines.append(s(f"  {r['status'].upper()} {r['id']} {r['level']} "
                               f"[{' '.join(r['clauses'])}] {r['title']}{known}{why}"))
        pending = [r for r in p["requirements"]
                   if r["level"] == "MUST" and r["status"] in ("skipped", "not-run")
                   and p["name"] is not None  # not opened: its line above says why, once
                   and not replay]
        for r in pending[:_NOT_PASSED_SHOWN]:
            lines.append(f"  {r['status'].upper()} {r['id']}: {s(r['reason'] or '')}")
        if len(pending) > _NOT_PASSED_SHOWN:
            lines.append(f"  ... and {len(pending) - _NOT_PASSED_SHOWN} more MUST requirements "
                         "skipped or not run")
    return lines
