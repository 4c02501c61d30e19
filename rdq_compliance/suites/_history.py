"""The recorded history of a concurrency check (C18), how it is judged and how it fails.

Every operation of a check's lanes is recorded with its lane and its start and end
on one monotonic clock; the history is judged afterwards with no timing assumption
but one: an operation recorded as starting after another's recorded end started
after it returned, so a correct plugin cannot fail however loaded the machine. A
failure shows the history of the id around the read, the seed and round of the plan,
and tags the test for ``--rdq-replay``, which runs the same plan for REPLAY_ROUNDS
rounds. The plan of a check (its seed and rounds per profile) is read here too.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Collection, Sequence
from typing import Any

from rdq_compliance import Envelope, diff
from rdq_compliance.suites._versions import Key, Op, version
from rdq_compliance.testing import Lane, Namespace, Rdq, derived_seed, now_ns

__all__ = ["REPLAY_ROUNDS", "ROUNDS", "History", "plan"]

ROUNDS = {"quick": 8, "ci": 12, "thorough": 50}
"""Rounds per check and profile (measured: benchmarks/concurrency.py)."""
REPLAY_ROUNDS = 30


class History:
    """The operations of one check, and the failure message that shows them."""

    def __init__(self, rdq: Rdq, check: str, seed: int, rounds: int) -> None:
        self.rdq = rdq
        self.check = check
        self.seed = seed
        self.rounds = rounds
        self.round = 0
        self.t0 = now_ns()
        self.reads: list[tuple[Key, Op]] = []
        self._lock = threading.Lock()

    def write(self, ns: Namespace, lane: str, key: Key) -> None:
        __tracebackhide__ = True
        k = len(key.writes)
        env = key.make(k)
        start = now_ns()
        ns.write(env)
        key.writes.append(Op(lane, "write", key.id, start, now_ns(), k))

    def write_plan(self, ns: Namespace, lane: Lane, who: str, plan: Sequence[Key]) -> None:
        """Write the next version of each key of ``plan`` in turn, until the lane stops."""
        __tracebackhide__ = True
        for key in plan:
            if lane.stopped:
                return
            self.write(ns, who, key)

    def read(self, ns: Namespace, lane: str, key: Key) -> Op:
        __tracebackhide__ = True
        start = now_ns()
        got = ns.read(key.id)
        op = Op(lane, "read", key.id, start, now_ns(), got=got)
        with self._lock:
            self.reads.append((key, op))
        return op

    # -- judging ----------------------------------------------------------------------

    def check_reads(self, *, atomic: bool, fresh: bool, what: str = "",
                    elsewhere: Collection[str] = ()) -> None:
        """Judge the reads recorded so far (and forget them).

        ``atomic`` (CC-001): a read equals one whole version of its id, one whose write
        had started before the read ended. ``fresh`` (CC-003): a read that started
        after version k's write returned sees k or a later version. ``elsewhere``: ids
        another namespace holds a version of, so that a read of one that found nothing
        is told as namespaces crossed (the diagnosis only: it judges nothing).
        """
        __tracebackhide__ = True
        reads, self.reads = self.reads, []
        for key, op in reads:
            op.k = key.match(op.got)
            if (op.k is None or key.writes[op.k].start >= op.end) and (atomic or fresh):
                self.fail_read(key, op, "returned " + (
                    "nothing" if op.got is None else
                    "an envelope that is no version written under this id"
                    if op.k is None else f"version {op.k}, whose write had not begun")
                    + f" ({what or 'C18: a write is atomic'})",
                    difference=("crossed" if key.id in elsewhere else "") if op.got is None
                    else "" if op.k is not None else key.mixture(op.got))
            if fresh:
                floor = max((w.k for w in key.writes if w.end < op.start and w.k is not None),
                            default=None)
                if floor is not None and op.k is not None and op.k < floor:
                    self.fail_read(key, op, f"returned version {op.k} although version "
                                   f"{floor} had been written and returned before this read "
                                   "started (C18: a read that starts after a write returned "
                                   "sees it or a later version)", difference="outdated")

    def fail_read(self, key: Key, op: Op, summary: str, *, difference: str = "") -> None:
        """Fail on ``op``, a read of ``key``; ``difference`` is what it found (the
        diagnosis table's class: ``torn``, ``outdated``, ``crossed``), "" if unknown."""
        __tracebackhide__ = True
        lines = [self.where(), f"history of id {key.id!r} in namespace {key.ns!r} "
                 "(ms from the start of the check; each interval contains the real one):"]
        window = [w for w in key.writes
                  if w.end >= op.start - 50_000_000 and w.start <= op.end + 5_000_000]
        shown = sorted([*window[-12:], op], key=lambda o: o.start)
        for o in shown:
            what = f"write v{o.k}" if o.kind == "write" else "read -> " + (
                "nothing" if o.got is None else f"v{o.k}" if o.k is not None else "no version")
            mark = "   <- this read" if o is op else ""
            lines.append(f"  {self.ms(o.start):>10} – {self.ms(o.end):<10} lane {o.lane:<4} "
                         f"{what}{mark}")
        envelopes: list[Envelope] = []
        if op.got is not None and op.k is None:
            got = op.got
            nearest = min(key.texts.values(),
                          key=lambda k: len(diff(version(key.n, k, key.tag), got)))
            expected = version(key.n, nearest, key.tag)
            lines.append(f"differences from the nearest version, v{nearest}:")
            lines.extend(f"  {d.pointer or '/'}: expected {short_json(d.expected)}, "
                         f"got {short_json(d.actual)}" for d in diff(expected, got)[:12])
            envelopes = [expected]
        self.fail(f"read({key.id!r}) in namespace {key.ns!r} by lane {op.lane} {summary}",
                  "\n".join(lines), envelopes, difference=difference)

    def where(self) -> str:
        return (f"round {self.round} of {self.rounds}, seed {self.seed} "
                f"(replay: the command below re-runs this plan for {REPLAY_ROUNDS} rounds)")

    def ms(self, t: int) -> str:
        return f"{(t - self.t0) / 1e6:.3f}"

    def fail(self, summary: str, detail: str, envelopes: Sequence[Envelope] = (), *,
             difference: str = "") -> None:
        __tracebackhide__ = True
        try:
            self.rdq.fail(summary, detail=detail, envelopes=envelopes, difference=difference)
        except BaseException:
            self.tag()
            raise

    def lanes(self, bodies: Sequence[Callable[[Lane], None]]) -> None:
        """Run one round's lanes; a failure inside them is saved with this plan too."""
        __tracebackhide__ = True
        try:
            self.rdq.run_lanes(bodies)
        except BaseException:
            self.tag()
            raise

    def tag(self) -> None:
        """What --rdq-replay needs to run this plan again (see kit._save_case)."""
        if self.rdq.example is None:
            self.rdq.example = (self.check, {"seed": self.seed, "round": self.round})


def short_json(value: Any) -> str:
    text = json.dumps(value, default=repr, ensure_ascii=False)
    return text if len(text) <= 100 else text[:100] + "…"


def plan(rdq: Rdq, check: str) -> tuple[int, int]:
    """(seed, rounds) of this check: from --rdq-seed, or from the replayed case."""
    case = rdq.replay
    if case is not None and case.example is not None and case.check == check:
        return int(case.example_kwargs()["seed"]), REPLAY_ROUNDS
    params = json.dumps(rdq.params, sort_keys=True)
    return (derived_seed(rdq.seed, check, params, "concurrency"),
            ROUNDS[rdq.profile])
