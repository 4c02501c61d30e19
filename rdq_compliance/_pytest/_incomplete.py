"""An incomplete verdict fails the run (issue 12 §1): what was not tested, and why.

A CI gate reads the exit status only. A run that tested nothing (server down,
testee that does not start, every MUST requirement deselected) must not exit 0,
so unless ``--rdq-allow-incomplete`` is given, a run whose exit status would be 0
while an applicable MUST requirement was skipped or never ran exits 1 instead,
with one final line saying what was not tested and why.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..reporting import terminal_safe
from ..reporting._outage import OUTAGE_REASON, is_outage_skip

__all__ = ["ALLOW_FLAG", "untested", "untested_line"]

ALLOW_FLAG = "--rdq-allow-incomplete"
_REASONS_SHOWN = 3


def untested(report: Mapping[str, Any]) -> dict[str, dict[str, int]]:
    """Plugin label -> why -> how many applicable MUST requirements were not tested
    for that reason (skipped, not run, or the plugin could not be opened)."""
    out: dict[str, dict[str, int]] = {}
    for p in report["plugins"]:
        reasons: dict[str, int] = {}
        for r in p["requirements"]:
            if r["level"] == "MUST" and r["status"] in ("skipped", "not-run"):
                why = r["reason"] or r["status"]
                why = OUTAGE_REASON if is_outage_skip(why) else why  # one, not one per moment
                if p["name"] is None and p["unavailable"]:
                    why = p["unavailable"]
                reasons[why] = reasons.get(why, 0) + 1
        if p["name"] is None and not reasons:
            reasons[p["unavailable"] or "the plugin was not opened"] = 0
        if reasons:
            out[p["label"]] = reasons
    return out


def untested_line(report: Mapping[str, Any], *, allowed: bool, exit_status: int) -> str | None:
    """The final line of an incomplete run, or None when every applicable MUST
    requirement of every plugin was tested (passed or failed)."""
    found = untested(report)
    if not found:
        return None
    parts = []
    for label, reasons in found.items():
        count = sum(reasons.values())
        ordered = sorted(reasons.items(), key=lambda kv: -kv[1])
        shown = "; ".join(
            f"{why} ({n} of them)" if n and len(reasons) > 1 else why
            for why, n in ordered[:_REASONS_SHOWN]
        )
        if len(ordered) > _REASONS_SHOWN:
            shown += f"; and {len(ordered) - _REASONS_SHOWN} other reasons"
        what = f"{count} MUST requirement{'s' if count != 1 else ''}" if count else "nothing"
        parts.append(f"{what} of plugin {label!r} not tested: {shown}")
    head = "INCOMPLETE: " + " | ".join(parts)
    if allowed:
        tail = f"exit status {exit_status} ({ALLOW_FLAG} accepts a partial run)"
    else:
        tail = (f"exit status {exit_status}; fix the cause, or pass {ALLOW_FLAG} "
                "(ini rdq_allow_incomplete = true) to accept a partial run")
    return terminal_safe(f"{head} -- {tail}")
