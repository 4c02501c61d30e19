"""Outages (C20): the tests a plugin's unreachable service cost, as one line.

A test whose plugin answered ``UNAVAILABLE`` (a Python ``StorageError`` with that code,
or a testee's ``UNAVAILABLE`` error response) while its service was down could not
run: the kit skips it with :func:`could_not_run_reason`, which stamps the moment. This
module reads those skips back out of the results and says, in one line per plugin,
when the service went away (the first and the last such answer) and how many tests
it cost. The verdict rules need nothing from here: a skipped MUST test already makes
a verdict ``incomplete``, never ``compliant`` and never ``non-compliant``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

__all__ = ["OUTAGE_REASON", "could_not_run_reason", "is_outage_skip", "outage_lines"]

OUTAGE_REASON = "the storage was unavailable (C20; see the outage note)"
"""What the INCOMPLETE line says for every test an outage cost (one reason, not one
per moment)."""

_PREFIX = "could not run: the storage was unavailable (C20) at "
_STAMP = re.compile(re.escape(_PREFIX) + r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)")


def _stamp(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def could_not_run_reason(moment: datetime, operation: str, message: str, *,
                         answer: str = "answered UNAVAILABLE") -> str:
    """The skip reason of a test that met an outage at ``moment``; ``answer``: what the
    operation did (a lost connection let through: ``raised ConnectionRefusedError``)."""
    first = (message.strip().splitlines() or [""])[0]
    if len(first) > 300:
        first = first[:300] + "…"
    return f"{_PREFIX}{_stamp(moment)}: {operation} {answer}: {first}"


def is_outage_skip(reason: object) -> bool:
    """True for the skip reason of a test that an outage kept from running."""
    return isinstance(reason, str) and _STAMP.search(reason) is not None


def _moments(plugin: Mapping[str, Any]) -> list[str]:
    return sorted(
        m.group(1)
        for r in plugin.get("requirements", ())
        for t in r.get("tests", ())
        if t.get("status") == "skipped"
        and (m := _STAMP.match(str(t.get("message") or ""))) is not None
    )


def outage_lines(plugins: Iterable[Mapping[str, Any]]) -> list[str]:
    """One line per plugin of a report (its ``plugins``) whose service was unavailable
    during the run: from when to when, and how many tests could not run."""
    lines = []
    for p in plugins:
        moments = _moments(p)
        if not moments:
            continue
        first, last = moments[0], moments[-1]
        when = f"at {first}" if first == last else f"from {first} to {last}"
        many = len(moments) != 1
        lines.append(
            f"plugin {p.get('label')!r}: its storage was unavailable (C20) {when}; "
            f"{len(moments)} test{'s' if many else ''} could not run (skipped, so the "
            "verdict is at best incomplete); run again once the service is up"
        )
    return lines
