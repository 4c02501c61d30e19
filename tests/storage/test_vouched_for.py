"""``vouched_for``: the kit skips re-validating a model only when it is the very object
the stdio bridge built (and validated) in one of its last reads.

Identity, not equality: an equal model from anywhere else (the kit's own expected value,
a copy, a rebuilt model) is validated as usual.
"""

from __future__ import annotations

import copy
import dataclasses
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from rdq_compliance import Envelope, Status
from rdq_compliance.storage._stdio import StdioAdapter, _vouch, rdq_storage_open, vouched_for

FAKE = Path(__file__).parent / "testees" / "good.py"
WINDOW = _vouch.VOUCHED_KEEP


def envelope(n: int = 0) -> Envelope:
    return Envelope(id=f"01J2ZK7Q8XW5H3N9G4T6B8RD{n:02d}", queue="q", handler_ref="h",
                    payload=b"\x00", payload_content_type="application/octet-stream",
                    status=Status.PENDING,
                    created_at=datetime(2024, 2, 29, 12, 0, 0, 1000, tzinfo=UTC),
                    headers={"a": "1"}, extra={"future": [1, {"k": None}]})


@pytest.fixture
def adapter() -> Iterator[StdioAdapter]:
    storage = rdq_storage_open({"command": f"{sys.executable} {FAKE}", "timeout": "10",
                                "start_timeout": "30", "state_dir": ""})
    try:
        ns = storage.open("ns_vouch")
        yield ns
        ns.close()
    finally:
        storage.close()


def test_window_is_eight_reads() -> None:
    assert WINDOW == 8


def test_only_the_object_a_read_returned_is_vouched_for(adapter: StdioAdapter) -> None:
    written = envelope()
    adapter.write(written)
    got = adapter.read(written.id)
    assert got is not None and got == written
    assert vouched_for(got)
    # equal, but not what the bridge built
    assert not vouched_for(written)
    assert not vouched_for(copy.deepcopy(got))
    assert not vouched_for(dataclasses.replace(got))
    assert not vouched_for(dataclasses.replace(got, headers={"a": "2"}))
    # a second read of the same id builds (and vouches for) a new object
    again = adapter.read(written.id)
    assert again is not got and again == got
    assert vouched_for(again) and vouched_for(got)


def test_nothing_else_is_vouched_for(adapter: StdioAdapter) -> None:
    assert adapter.read(envelope(1).id) is None  # a missing id: nothing built
    for value in (None, object(), envelope(), {"id": "x"}):
        assert not vouched_for(value)


def test_a_read_falls_out_after_the_window(adapter: StdioAdapter) -> None:
    written = envelope(2)
    adapter.write(written)
    first = adapter.read(written.id)
    later = [adapter.read(written.id) for _ in range(WINDOW - 1)]
    assert all(e is not None for e in later)
    assert vouched_for(first)  # the last WINDOW reads: first included
    assert all(vouched_for(e) for e in later)
    newest = adapter.read(written.id)  # one read more
    assert not vouched_for(first)
    assert first == newest  # still equal, just no longer vouched for
    assert all(vouched_for(e) for e in [*later, newest])
