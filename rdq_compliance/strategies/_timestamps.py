"""Strategies for the timestamps of an envelope (C3): aware UTC instants at
millisecond precision, biased to the instants real stores get wrong."""

from __future__ import annotations

import functools
from datetime import UTC, datetime, timedelta

from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

from ._draws import index

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
LAST_INSTANT = datetime(9999, 12, 31, 23, 59, 59, 999_000, tzinfo=UTC)


def _ts(text: str) -> datetime:
    return datetime.fromisoformat(text)


# Instants that real stores get wrong: range ends, leap days, 32-bit second
# counters (2038, 2106), int64 nanoseconds (2262, Go's UnixNano), .000/.999, and the
# repeated hour when clocks fall back (an instant kept as local time in a zone with
# daylight saving reads back an hour early there): Europe's zones, the four US zones,
# Sydney.
_TIMESTAMP_EDGES = tuple(
    _ts(t)
    for t in (
        "1970-01-01T00:00:00.000Z",
        "1970-01-01T00:00:00.001Z",
        "1972-02-29T12:00:00.000Z",
        "1999-12-31T23:59:59.999Z",
        "2000-02-29T00:00:00.000Z",
        "2024-02-29T23:59:59.999Z",
        "2038-01-19T03:14:07.999Z",
        "2038-01-19T03:14:08.000Z",
        "2106-02-07T06:28:15.999Z",
        "2262-04-11T23:47:16.854Z",
        "2026-04-04T16:30:00.500Z",
        "2026-10-25T01:30:00.500Z",
        "2026-11-01T06:30:00.500Z",
        "2026-11-01T07:30:00.500Z",
        "2026-11-01T08:30:00.500Z",
        "2026-11-01T09:30:00.500Z",
        "9996-02-29T00:00:00.000Z",
        "9999-12-31T23:59:59.999Z",
    )
)


def _check_instant(name: str, value: object) -> datetime:
    if (
        not isinstance(value, datetime)
        or value.utcoffset() is None
        or value.utcoffset().total_seconds() != 0  # type: ignore[union-attr]
        or value.microsecond % 1000
        or not EPOCH <= value <= LAST_INSTANT
    ):
        raise InvalidArgument(
            f"{name}={value!r} must be an aware UTC datetime with millisecond precision "
            f"between {EPOCH.isoformat()} and {LAST_INSTANT.isoformat()}"
        )
    return value.astimezone(UTC)


def timestamps(
    *, min_value: datetime = EPOCH, max_value: datetime = LAST_INSTANT
) -> st.SearchStrategy[datetime]:
    """Aware UTC datetimes at millisecond precision (C3), 1970-01-01T00:00:00.000Z
    to 9999-12-31T23:59:59.999Z by default, biased to the range ends, leap days,
    ``.000``/``.999`` fractions and the overflow points of 32-bit seconds and
    64-bit nanoseconds (2038, 2106, 2262)."""
    lo = _check_instant("min_value", min_value)
    hi = _check_instant("max_value", max_value)
    if lo > hi:
        raise InvalidArgument(f"min_value={min_value!r} is after max_value={max_value!r}")
    return _timestamps(lo, hi)


def _ms(moment: datetime) -> int:
    return (moment - EPOCH) // timedelta(milliseconds=1)


@functools.cache
def _timestamps(lo: datetime, hi: datetime) -> st.SearchStrategy[datetime]:
    # Milliseconds since the epoch: one draw per instant instead of one per
    # calendar field, which matters when the kit generates thousands.
    return _timestamps_from(TimestampDraw.of(lo, hi))


class TimestampDraw:
    """One instant in ``lo``..``hi``, drawn inline by a composite (see ``_draws``): an
    edge, any millisecond, or a whole second or ``.999`` (the fractions a store drops
    or rounds up), a third each (the branches of the one_of this replaced)."""

    __slots__ = ("edges", "hi_ms", "lo_ms", "millis", "seconds")

    def __init__(self, lo_ms: int, hi_ms: int, edges: st.SearchStrategy[datetime]) -> None:
        self.lo_ms, self.hi_ms, self.edges = lo_ms, hi_ms, edges
        self.millis = st.integers(lo_ms, hi_ms)
        # A whole second or its .999, both in one choice: twice the second, plus one.
        self.seconds = st.integers(lo_ms // 1000 * 2, hi_ms // 1000 * 2 + 1)

    @staticmethod
    @functools.cache
    def of(lo: datetime, hi: datetime) -> TimestampDraw:
        edges = [t for t in (lo, hi, *_TIMESTAMP_EDGES) if lo <= t <= hi]
        return TimestampDraw(_ms(lo), _ms(hi), st.sampled_from(edges))

    def __call__(self, draw: st.DrawFn) -> datetime:
        return self.at(draw, draw(index(3)))

    def at(self, draw: st.DrawFn, kind: int) -> datetime:
        """The instant of branch ``kind`` (0-2)."""
        if kind == 0:
            moment: datetime = draw(self.edges)
            return moment
        if kind == 1:
            return EPOCH + timedelta(milliseconds=draw(self.millis))
        second, fraction = divmod(draw(self.seconds), 2)
        ms = second * 1000 + 999 * fraction
        return EPOCH + timedelta(milliseconds=min(max(ms, self.lo_ms), self.hi_ms))


@st.composite
def _timestamps_from(draw: st.DrawFn, instant: TimestampDraw) -> datetime:
    return instant(draw)
