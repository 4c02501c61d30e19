"""``REPEATED_HOURS`` (RDQ-RT-007) against the tz database of this machine: both passes of
every zone's 2026 fall-back hold one of its instants, and each instant lies in a pass of
some zone (a list that missed a zone, or kept an instant no zone repeats, fails here)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo, available_timezones

from rdq_compliance.suites._roundtrip_cases import REPEATED_HOURS

_STEP = timedelta(hours=6)  # no zone turns its clocks twice within six hours


def _offset(zone: ZoneInfo, at: datetime) -> timedelta:
    offset = at.astimezone(zone).utcoffset()
    assert offset is not None
    return offset


def _fall_backs(zone: ZoneInfo) -> list[tuple[datetime, timedelta]]:
    """(the UTC instant the clocks turn back, by how much) for each 2026 fall-back."""
    found = []
    at = datetime(2026, 1, 1, tzinfo=UTC)
    while at.year == 2026:
        before, after = _offset(zone, at), _offset(zone, at + _STEP)
        if after < before:
            lo, hi = at, at + _STEP
            while hi - lo > timedelta(seconds=1):
                mid = lo + (hi - lo) / 2
                lo, hi = (lo, mid) if _offset(zone, mid) < before else (mid, hi)
            found.append((hi.replace(microsecond=0), before - after))
        at += _STEP
    return found


def _passes() -> dict[str, list[tuple[datetime, datetime]]]:
    """Zone name -> the UTC spans of both passes of each 2026 repeated hour."""
    spans: dict[str, list[tuple[datetime, datetime]]] = {}
    for name in sorted(available_timezones()):
        if name.startswith(("Etc/", "SystemV/", "posix/", "right/")):
            continue
        for turn, by in _fall_backs(ZoneInfo(name)):
            spans.setdefault(name, []).extend([(turn - by, turn), (turn, turn + by)])
    return spans


def test_every_zones_repeated_hour_is_in_the_list_and_nothing_else_is() -> None:
    passes = _passes()
    assert len(passes) > 100, "this machine's tz database looks empty (install tzdata)"
    missed = [(name, str(lo)) for name, spans in passes.items() for lo, hi in spans
              if not any(lo <= at < hi for at in REPEATED_HOURS)]
    assert not missed, f"passes of a repeated hour no instant of REPEATED_HOURS is in: {missed}"
    every = [span for spans in passes.values() for span in spans]
    stray = [str(at) for at in REPEATED_HOURS if not any(lo <= at < hi for lo, hi in every)]
    assert not stray, f"instants of REPEATED_HOURS in no zone's repeated hour: {stray}"
    assert all(at.microsecond == 250_000 and at.utcoffset() == timedelta(0)
               for at in REPEATED_HOURS)
