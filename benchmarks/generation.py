"""Generation alone (issue 25): the strategies a memory ``ci`` run draws, in-process.

Every property of the suites is replayed here with its ``ci`` budget (examples per
property), the kit's Hypothesis settings and a fixed seed, but with a body that does
nothing, and the state machine with rules that do nothing: what is left is
Hypothesis drawing the examples (generation and its engine), none of the plugin's
or the kit's checks. Prints the CPU seconds per property, the total, and the number
of examples and ``data.draw`` calls (spans) and choices per example.

    python -m benchmarks.generation            # 3 rounds after a warm-up
    python -m benchmarks.generation 1 RT-001   # one round of the properties named so
    PYTHONPATH=/path/to/other/tree python -m benchmarks.generation   # another tree

The example counts are the same for every tree with the same Hypothesis; compare code
states by CPU time in interleaved runs, or by instructions (``valgrind --tool=cachegrind``
of ``1 NAME`` less ``0 NAME``: a warm-up round only), which do not move with the load.
"""

from __future__ import annotations

import collections
import resource
import sys
from collections.abc import Callable
from typing import Any

from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st
from hypothesis.stateful import Bundle, RuleBasedStateMachine, initialize, rule
from hypothesis.stateful import run_state_machine_as_test as run_machine

from rdq_compliance.envelope._limits import INT64_MAX, INT64_MIN, MESSAGE_LIMIT, STACK_LIMIT
from rdq_compliance.envelope._wire import ATTEMPT_FIELDS, ENVELOPE_FIELDS, ERROR_FIELDS
from rdq_compliance.strategies import (
    envelopes,
    envelopes_of_other_versions,
    free_texts,
    header_maps,
    ids,
    json_values,
    long_texts,
    payloads,
    truncated_texts,
    unknown_field_maps,
)
from rdq_compliance.suites._strategies import (
    distinct_envelopes,
    envelopes_with_extras_everywhere,
    envelopes_with_free_text_everywhere,
    envelopes_with_reordered_attempts,
    envelopes_with_timestamps_everywhere,
    envelopes_with_typed_fields,
)

# The kit's suppressions (testing/_properties.py: hypothesis_settings), nothing more.
_SUPPRESS = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example]
GENERIC, TARGETED, HEAVY = 40, 25, 10  # BUDGETS[...]["ci"]
_NUMBERS = st.integers(INT64_MIN, INT64_MAX) | st.floats(allow_nan=False, allow_infinity=False)
_PAIRS = envelopes(max_attempts=3, max_payload_size=64)

CASES: list[tuple[str, dict[str, st.SearchStrategy[Any]], int]] = [
    ("RT-001 envelopes(extremes=0.1)", {"env": envelopes(extremes=0.1)}, GENERIC),
    ("RT-002 distinct envelopes", {"batch": distinct_envelopes()}, HEAVY),
    ("RT-003 distinct envelopes 1-4", {"batch": distinct_envelopes(min_size=1, max_size=4)},
     HEAVY),
    ("RT-004 typed fields", {"env": envelopes_with_typed_fields()}, HEAVY),
    ("RT attempt order", {"env": envelopes_with_reordered_attempts()}, TARGETED),
    ("RT free text", {"env": envelopes_with_free_text_everywhere()}, TARGETED),
    ("RT timestamps", {"env": envelopes_with_timestamps_everywhere()}, TARGETED),
    ("RT payloads", {"id": ids(), "payload": payloads(max_size=4096)}, TARGETED),
    ("RT headers", {"id": ids(), "headers": header_maps()}, TARGETED),
    ("RT long values", {"id": ids(), "long": st.tuples(st.sampled_from("abcdef"),
                                                       long_texts())}, TARGETED),
    ("ST-001 rewrite pairs", {"first": _PAIRS, "second": _PAIRS}, TARGETED),
    ("TR truncated", {"message": truncated_texts(limit=MESSAGE_LIMIT),
                      "stack": truncated_texts(limit=STACK_LIMIT)}, HEAVY),
    ("TR free text", {"text": free_texts(max_size=40)}, TARGETED),
    ("UF top level", {"id": ids(), "extra": unknown_field_maps(forbidden_keys=ENVELOPE_FIELDS,
                                                               max_size=5)}, TARGETED),
    ("UF attempt", {"extra": unknown_field_maps(forbidden_keys=ATTEMPT_FIELDS, max_size=5)},
     TARGETED),
    ("UF error", {"extra": unknown_field_maps(forbidden_keys=ERROR_FIELDS, max_size=5)},
     TARGETED),
    ("UF everywhere", {"env": envelopes_with_extras_everywhere()}, TARGETED),
    ("UF numbers", {"values": st.lists(_NUMBERS, min_size=1, max_size=8)}, TARGETED),
    ("UF detail", {"detail": json_values(max_leaves=12)}, TARGETED),
    ("V declared", {"env": envelopes(envelope_versions=(1,), max_attempts=1,
                                     max_payload_size=64)}, TARGETED),
    ("V others", {"env": envelopes_of_other_versions(exclude=(1,))}, TARGETED),
]


def _settings(examples: int, steps: int = 1) -> settings:
    return settings(max_examples=examples, stateful_step_count=steps, deadline=None,
                    database=None, suppress_health_check=_SUPPRESS,
                    phases=(Phase.explicit, Phase.generate, Phase.target, Phase.shrink))


def _machine() -> None:
    """RDQ-ST-006's machine with the same rules and strategies, doing nothing."""
    stored = envelopes(max_attempts=1, max_payload_size=64)
    namespaces = st.integers(0, 1)

    class Machine(RuleBasedStateMachine):
        written = Bundle("written")

        @initialize(shape=st.sampled_from(["a", "b", "c"]))
        def names(self, shape: str) -> None:
            pass

        @rule(target=written, env=stored, i=namespaces)
        def write(self, env: Any, i: int) -> str:
            return str(env.id)

        @rule(id=written, env=stored, i=namespaces)
        def rewrite(self, id: str, env: Any, i: int) -> None:
            pass

        @rule(id=written, i=namespaces)
        def read_written(self, id: str, i: int) -> None:
            pass

        @rule(id=ids(), i=namespaces)
        def read_other(self, id: str, i: int) -> None:
            pass

        @rule(kind=st.sampled_from(["drop", "reopen"]), i=namespaces)
        def drop_or_reopen(self, kind: str, i: int) -> None:
            pass

    seed(12345)(Machine)
    run_machine(Machine, settings=_settings(20, 30))


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def run(rounds: int, only: str | None = None) -> dict[str, float]:
    """CPU seconds per property over ``rounds`` rounds."""
    total: dict[str, float] = collections.defaultdict(float)
    for _ in range(rounds):
        for i, (name, strategies, examples) in enumerate(CASES):
            if only and only not in name:
                continue

            @_settings(examples)
            @seed(1000 + i)
            @given(**strategies)
            def nothing(**drawn: Any) -> None:
                pass

            start = _cpu()
            nothing()
            total[name] += _cpu() - start
        if not only or only in "ST-006 machine":
            start = _cpu()
            _machine()
            total["ST-006 machine"] += _cpu() - start
    return total


def _count(only: str | None) -> tuple[int, int, int]:
    """Examples, data.draw calls and choices of one round (Hypothesis' internals patched
    for the count only)."""
    from hypothesis.internal.conjecture import data as conjecture

    counts: collections.Counter[str] = collections.Counter()
    cls: Any = conjecture.ConjectureData
    draw, choose, freeze = cls.draw, cls._draw, cls.freeze

    def counted(key: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            counts[key] += 1
            return fn(*args, **kwargs)
        return call

    cls.draw, cls._draw, cls.freeze = (counted("draws", draw), counted("choices", choose),
                                       counted("examples", freeze))
    try:
        run(1, only)
    finally:
        cls.draw, cls._draw, cls.freeze = draw, choose, freeze
    return counts["examples"], counts["draws"], counts["choices"]


def main(argv: list[str]) -> int:
    rounds = int(argv[0]) if argv else 3
    only = argv[1] if len(argv) > 1 else None
    run(1, only)  # warm-up: imports, Hypothesis' caches, the strategies' caches
    total = run(rounds, only)
    for name, seconds in sorted(total.items(), key=lambda kv: -kv[1]):
        print(f"{seconds / max(rounds, 1):8.3f} s  {name}")
    cpu = sum(total.values()) / max(rounds, 1)
    print(f"{cpu:8.3f} s  total CPU per round")
    if rounds:
        examples, draws, choices = _count(only)
        print(f"{examples} examples; per example: {cpu / examples * 1000:.2f} ms CPU, "
              f"{draws / examples:.0f} draws, {choices / examples:.0f} choices")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
