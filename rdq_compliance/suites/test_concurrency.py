"""Concurrency (C18): atomic writes, no lost updates, read-after-write, isolation, drops
after concurrent writes (RDQ-CC-001 … RDQ-CC-005), for plugins that declare the
``concurrent`` capability.

Every check runs rounds of *lanes* (kit threads with a plugin worker each, released
together at a barrier; see ``rdq.run_lanes``) and records a history: for every
operation, its lane and its start and end on one monotonic clock. The history is
judged afterwards with no timing assumption but one: an operation recorded as
starting after another's recorded end started after it returned. So a correct
plugin cannot fail, however slow or loaded the machine.

- Each id is rewritten by one writer lane only, so its writes are totally ordered
  (version 0, 1, 2 …); every version differs from the others in every part (attempts,
  headers, unknown fields, sizes), so a read that mixes two matches neither.
- A read must equal one whole version (CC-001); a read that started after version k
  returned must see k or later (CC-003).

The plan of a round (which ids, how many operations) comes from a seed derived from
``--rdq-seed``; a failure names the seed, the round and the history of the id, and
``--rdq-replay`` runs the same plan again, for more rounds (interleavings differ from
run to run: a replay repeats the plan, not the exact timing).
"""

from __future__ import annotations

import random
import threading
from collections.abc import Callable

from rdq_compliance.suites._history import History, plan
from rdq_compliance.suites._versions import Key, Op, version
from rdq_compliance.testing import Lane, Rdq, now_ns, requirement

WRITES_PER_ROUND = 16
"""Writes of each writer lane per round."""
MAX_READS = 400
"""Reads of one reader lane per round, at most (it reads until the writers are done)."""
DROP_WRITERS, DROP_IDS = 3, 8
"""RDQ-CC-005: lanes writing the namespace to drop, and the ids each writes per round."""
MAX_NOISE = 5_000
"""RDQ-CC-005: writes of the other namespace per round, at most (it writes until the
drop and its reads are done)."""


def _rewrites_and_reads(rdq: Rdq, check: str, *, atomic: bool, fresh: bool) -> None:
    """Two writer lanes rewrite three ids (each id has one writer) while two reader lanes,
    each with an adapter of its own on the same namespace, read them; then every id is
    read once more after all writes returned."""
    __tracebackhide__ = True
    seed, rounds = plan(rdq, check)
    if rdq.replay is not None and (rdq.replay.check or check) != check:
        return
    rng = random.Random(seed)
    name = rdq.new_name()
    base = rng.randrange(1 << 40)
    keys = [Key(name, base + i) for i in range(3)]
    history = History(rdq, check, seed, rounds)
    setup = rdq.namespace(name)
    for key in keys:
        history.write(setup, "main", key)
    writers = 2

    def one_round() -> None:
        __tracebackhide__ = True
        plans = [[rng.choice(keys[w::writers]) for _ in range(WRITES_PER_ROUND)]
                 for w in range(writers)]
        reads = [[rng.choice(keys) for _ in range(MAX_READS)] for _ in range(2)]
        done = threading.Event()
        left = [writers]
        left_lock = threading.Lock()

        def writer(lane: Lane, plan: list[Key]) -> None:
            __tracebackhide__ = True
            ns = rdq.namespace(name)
            try:
                history.write_plan(ns, lane, f"w{lane.index}", plan)
            finally:
                with left_lock:
                    left[0] -= 1
                    if left[0] == 0:
                        done.set()

        def reader(lane: Lane, plan: list[Key]) -> None:
            __tracebackhide__ = True
            ns = rdq.namespace(name)
            for i, key in enumerate(plan):
                if lane.stopped or (done.is_set() and i >= 8):
                    return
                history.read(ns, f"r{lane.index}", key)

        bodies: list[Callable[[Lane], None]] = [
            *(lambda lane, p=p: writer(lane, p) for p in plans),
            *(lambda lane, p=p: reader(lane, p) for p in reads),
        ]
        history.lanes(bodies)
        for key in keys:  # after every write returned: the last version, nothing else
            history.read(setup, "main", key)
        history.check_reads(atomic=atomic, fresh=fresh)

    for history.round in range(1, rounds + 1):
        one_round()


@requirement("RDQ-CC-001")
def test_writes_are_atomic(rdq: Rdq) -> None:
    """RDQ-CC-001 (C18): while writer lanes rewrite ids between whole, distinguishable
    versions, every read by the reader lanes (their own adapters on the same namespace)
    returns one whole version of that id, never a mix of two."""
    _rewrites_and_reads(rdq, "atomic", atomic=True, fresh=False)


@requirement("RDQ-CC-003")
def test_read_after_write(rdq: Rdq) -> None:
    """RDQ-CC-003 (C18): a read that starts after a write of its id returned sees that
    version or a later one (judged on the recorded history: no other timing assumption)."""
    _rewrites_and_reads(rdq, "fresh", atomic=False, fresh=True)


@requirement("RDQ-CC-002")
def test_no_lost_updates(rdq: Rdq) -> None:
    """RDQ-CC-002 (C18): four lanes, each with its own adapter on one namespace, write
    different ids at the same time; once all returned, every one of them reads back."""
    __tracebackhide__ = True
    seed, rounds = plan(rdq, "lost")
    if rdq.replay is not None and (rdq.replay.check or "lost") != "lost":
        return
    rng = random.Random(seed)
    name = rdq.new_name()
    history = History(rdq, "lost", seed, rounds)
    check_ns = rdq.namespace(name)
    lanes, per_lane = 4, 6

    def one_round() -> None:
        __tracebackhide__ = True
        base = rng.randrange(1 << 40)
        keys = [[Key(name, base + lane * 100 + i) for i in range(per_lane)]
                for lane in range(lanes)]

        def writer(lane: Lane) -> None:
            __tracebackhide__ = True
            history.write_plan(rdq.namespace(name), lane, f"w{lane.index}", keys[lane.index])

        history.lanes([writer] * lanes)
        for key in (k for row in keys for k in row):
            op = history.read(check_ns, "main", key)
            op.k = key.match(op.got)
            if op.k != 0:
                w = key.writes[0]
                history.fail(
                    f"read({key.id!r}) in namespace {name!r} returned "
                    + ("nothing" if op.got is None else "another envelope")
                    + f" after every concurrent write had returned; lane {w.lane} wrote it "
                    "(C18: writes of different ids never lose one another — an unguarded "
                    "read-modify-write of a shared document does)",
                    f"{history.where()}\nwrites of this round: {lanes} lanes x {per_lane} "
                    f"ids, all in namespace {name!r}; this one by lane {w.lane} at "
                    f"{history.ms(w.start)} – {history.ms(w.end)} ms, read back at "
                    f"{history.ms(op.start)} ms",
                    [version(key.n, 0)],
                )
        history.reads.clear()

    for history.round in range(1, rounds + 1):
        one_round()


@requirement("RDQ-CC-004")
def test_isolation_under_concurrency(rdq: Rdq) -> None:
    """RDQ-CC-004 (C14, C18): while one lane rewrites ids in namespace A and another reads
    them, two lanes write the same ids in namespaces B and C and drop and reopen those
    namespaces; every read in A returns one of A's own versions, never older than the
    last one returned before it started, and A holds its last versions at the end."""
    __tracebackhide__ = True
    seed, rounds = plan(rdq, "isolation")
    if rdq.replay is not None and (rdq.replay.check or "isolation") != "isolation":
        return
    rng = random.Random(seed)
    a, others = rdq.new_name(), [rdq.new_name(), rdq.new_name()]
    base = rng.randrange(1 << 40)
    keys = [Key(a, base + i, "A") for i in range(3)]
    history = History(rdq, "isolation", seed, rounds)
    setup = rdq.namespace(a)
    for key in keys:
        history.write(setup, "main", key)

    def one_round() -> None:
        __tracebackhide__ = True
        plan = [rng.choice(keys) for _ in range(WRITES_PER_ROUND)]
        noise = [[rng.randrange(8) for _ in range(WRITES_PER_ROUND)] for _ in others]
        done = threading.Event()

        def writer(lane: Lane) -> None:
            __tracebackhide__ = True
            ns = rdq.namespace(a)
            try:
                history.write_plan(ns, lane, "wA", plan)
            finally:
                done.set()

        def reader(lane: Lane) -> None:
            __tracebackhide__ = True
            ns = rdq.namespace(a)
            for i in range(MAX_READS):
                if lane.stopped or (done.is_set() and i >= 8):
                    return
                history.read(ns, "rA", keys[i % len(keys)])

        def other(lane: Lane, j: int) -> None:
            __tracebackhide__ = True
            name = others[j]
            tag = "BC"[j]
            ns = rdq.namespace(name)
            for step, choice in enumerate(noise[j]):
                if lane.stopped:
                    return
                if choice == 0 and step:  # now and then: drop the namespace, reopen it
                    ns.close()
                    rdq.drop(name)
                    ns = rdq.namespace(name)
                else:  # the same ids as in A, other contents
                    key = keys[choice % len(keys)]
                    ns.write(version(key.n, 1000 + step, tag))

        history.lanes([writer, reader, lambda lane: other(lane, 0),
                                lambda lane: other(lane, 1)])
        for key in keys:
            history.read(setup, "main", key)
        # Of the ids a read found nothing of, those of which B or C holds one of A's
        # versions: A's writes landed there (one connection for every adapter, its
        # namespace switched between SET and the statement).
        lost = {op.id for _, op in history.reads if op.got is None}
        holders = [rdq.namespace(name) for name in others] if lost else []
        elsewhere = {key.id for key in keys if key.id in lost
                     and any(key.match(ns.peek(key.id)) is not None for ns in holders)}
        history.check_reads(atomic=True, fresh=True, elsewhere=elsewhere,
                            what="C14, C18: namespaces B and C were written and dropped at "
                                 "the same time; nothing of theirs may reach A")

    for history.round in range(1, rounds + 1):
        one_round()


@requirement("RDQ-CC-005")
def test_drop_after_concurrent_writes(rdq: Rdq) -> None:
    """RDQ-CC-005 (C14, C18): three lanes, each with its own adapter, write different ids
    in namespace X at the same time while a fourth lane keeps rewriting ids in namespace
    Y. Once the three returned, the last of them drops X (Y is still being written) and
    reads every id ever written to X, this round and before: each must be gone. Y holds
    its last versions at the end. Judged on the recorded order alone: the drop starts
    after every write to X returned, each read after the drop returned."""
    __tracebackhide__ = True
    seed, rounds = plan(rdq, "drop")
    if rdq.replay is not None and (rdq.replay.check or "drop") != "drop":
        return
    rng = random.Random(seed)
    x, y = rdq.new_name(), rdq.new_name()
    history = History(rdq, "drop", seed, rounds)
    base = rng.randrange(1 << 40)
    y_keys = [Key(y, base + i, "Y") for i in range(3)]
    written: list[Key] = []
    """Every id ever written to X, in the order of the rounds."""

    def one_round() -> None:
        __tracebackhide__ = True
        base = rng.randrange(1 << 40)
        keys = [[Key(x, base + lane * 100 + i) for i in range(DROP_IDS)]
                for lane in range(DROP_WRITERS)]
        written.extend(k for row in keys for k in row)
        ever = list(written)
        left = [DROP_WRITERS]
        left_lock = threading.Lock()
        done = threading.Event()
        drops: list[tuple[str, int, int]] = []
        after: list[tuple[Key, Op]] = []

        def drop_and_read(lane: Lane) -> None:
            __tracebackhide__ = True
            who = f"d{lane.index}"
            start = now_ns()
            rdq.drop(x)
            drops.append((who, start, now_ns()))
            ns = rdq.namespace(x)
            for key in ever:
                if lane.stopped:
                    return
                start = now_ns()
                got = ns.read(key.id)
                after.append((key, Op(who, "read", key.id, start, now_ns(), got=got)))

        def writer(lane: Lane) -> None:
            __tracebackhide__ = True
            ns = rdq.namespace(x)
            history.write_plan(ns, lane, f"w{lane.index}", keys[lane.index])
            ns.close()
            with left_lock:
                left[0] -= 1
                last = left[0] == 0 and not lane.stopped
            if last:  # every write to X has returned: drop it, Y still being written
                try:
                    drop_and_read(lane)
                finally:
                    done.set()

        def noise(lane: Lane) -> None:
            __tracebackhide__ = True
            ns = rdq.namespace(y)
            for step in range(MAX_NOISE):
                if lane.stopped or done.is_set():
                    return
                history.write(ns, f"y{lane.index}", y_keys[step % len(y_keys)])

        history.lanes([*([writer] * DROP_WRITERS), noise])
        if not drops:  # pragma: no cover - a lane failed before: lanes() raised it
            return
        who, start, end = drops[0]
        for key, op in after:
            if op.got is None:
                continue
            op.k = key.match(op.got)
            w = key.writes[-1] if key.writes else None
            wrote = (f"lane {w.lane} wrote it at {history.ms(w.start)} – {history.ms(w.end)} "
                     "ms" if w is not None else "it was written")
            # A version written to X that Y holds: that write landed in Y (one connection
            # for every adapter, its namespace switched between SET and the statement),
            # out of the drop's reach: namespaces crossed (RDQ-CC-004), not a drop that
            # missed it.
            crossed = key.match(check_y.peek(key.id)) is not None
            if crossed:
                wrote += f"; namespace {y!r} holds a version of it too"
            history.fail(
                f"read({key.id!r}) in namespace {x!r} returned "
                + ("an envelope" if op.k is None else f"version {op.k}")
                + " after the namespace was dropped (C14: a drop removes everything written "
                "there, also what concurrent writers wrote, C18 — a side index of ids "
                "updated without a lock loses some, and a drop by that index leaves them)",
                f"{history.where()}\nwrites to {x!r} this round: {DROP_WRITERS} lanes x "
                f"{DROP_IDS} ids at once, {len(ever)} ids written there so far; {wrote}; "
                f"lane {who} dropped the namespace at {history.ms(start)} – "
                f"{history.ms(end)} ms, after every write had returned, and read this id at "
                f"{history.ms(op.start)} ms",
                [] if op.got is None else [op.got],
                difference="crossed" if crossed else "",
            )
        for key in y_keys:  # Y was never dropped: its last versions, whole
            if key.writes:
                last_k = len(key.writes) - 1
                held = key.match(check_y.peek(key.id))
                landed = key.match(rdq.namespace(x).peek(key.id)) if (
                    held is not None and held < last_k) else None
                if held is not None and landed is not None and landed > held:
                    # Y's later writes are in X (the same crossing as above, the other way)
                    history.fail(
                        f"read({key.id!r}) in namespace {y!r} returned version {held}, not "
                        f"{last_k}, the last one lane {key.writes[-1].lane} wrote there, and "
                        f"namespace {x!r} holds version {landed} of it (C14, C18: what is "
                        "written to one namespace stays there, whatever other adapters do "
                        "at the same time)", history.where(), [version(key.n, last_k, key.tag)],
                        difference="crossed")
                check_y.expect(key.id, version(key.n, last_k, key.tag),
                               why=f"only namespace {x!r} was dropped, while lane "
                               f"{key.writes[-1].lane} wrote this one (C14)")

    check_y = rdq.namespace(y)
    for history.round in range(1, rounds + 1):
        one_round()
