"""Issue 21 §2: an example runs after the requirements whose values it carries, so that
``-x`` stops first on the requirement of a defect (``_ordering.item_rank``).

Fake items as in ``test_ordering.py``, with the parameters pytest would give them
(``callspec.params``) and the marker's ``carries``.
"""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace
from typing import Any

from rdq_compliance import Attempt, ErrorInfo, Outcome
from rdq_compliance._pytest._ordering import carried, examples_first, item_rank, longest_first
from rdq_compliance._pytest.kit import MARKER, SUITE_MODULE_PREFIX
from rdq_compliance.envelope._carried import requirements_carried
from rdq_compliance.envelope._codec import to_json
from rdq_compliance.testing import EVERY_JSON_TYPE, T0, base_envelope, with_error

KIT_MODULE = SUITE_MODULE_PREFIX + "test_roundtrip"


def item(name: str, requirement: str, params: dict[str, Any] | None = None,
         carries: tuple[str, ...] = (), **more: Any) -> Any:
    fake = SimpleNamespace(name=name, module=SimpleNamespace(__name__=KIT_MODULE))
    kwargs: dict[str, Any] = {"carries": carries} if carries else {}
    kwargs.update(more)
    mark = SimpleNamespace(args=(requirement,), kwargs=kwargs)
    fake.get_closest_marker = lambda n: mark if n == MARKER else None
    if params is not None:
        fake.callspec = SimpleNamespace(params={"rdq_plugin": "memory", **params})
    return fake


WHOLE = T0.replace(microsecond=0)
PLAIN = base_envelope(1, created_at=WHOLE, next_attempt_at=WHOLE,
                      headers={"traceparent": "x"},
                      attempts=(Attempt(attempt_no=1, started_at=WHOLE, finished_at=WHOLE,
                                        outcome=Outcome.RETRYABLE_FAILURE,
                                        error=ErrorInfo(type="e.Plain", message="plain")),))


def test_values_carry_the_requirement_their_loss_belongs_to() -> None:
    assert requirements_carried(to_json(PLAIN), envelope=True) == frozenset()
    env = to_json(base_envelope(2))  # instants to the millisecond, a dotted header key
    assert requirements_carried(env, envelope=True) == {"RDQ-RT-007", "RDQ-RT-009"}
    assert requirements_carried(env, envelope=True, common={"dotted-key"}) == {"RDQ-RT-007"}
    # an attempt without an error: a reader dereferencing it raises (RDQ-RT-010, C9)
    bare_attempt = dataclasses.replace(PLAIN.attempts[0], outcome=Outcome.SUCCESS, error=None)
    assert requirements_carried(to_json(dataclasses.replace(PLAIN, attempts=(bare_attempt,))),
                                envelope=True) == {"RDQ-RT-010"}
    two = dataclasses.replace(PLAIN, attempts=PLAIN.attempts * 2)
    assert requirements_carried(to_json(two), envelope=True) == {"RDQ-RT-005"}
    inside = with_error(base_envelope(4, extra={"x": 1}), detail=[1], extra={"y": 2})
    assert requirements_carried(to_json(inside), envelope=True, common={"dotted-key"}) == {
        "RDQ-RT-007", "RDQ-UF-001", "RDQ-UF-003", "RDQ-UF-006"}
    assert requirements_carried(to_json(dataclasses.replace(PLAIN, handler_version="")),
                                envelope=True) == {"RDQ-RT-010"}
    bare = {k: requirements_carried(v, envelope=False) for k, v in EVERY_JSON_TYPE.items()}
    assert bare["empty_string"] == bare["empty_array"] == {"RDQ-RT-010"}
    assert bare["string"] == {"RDQ-RT-006"}  # U+0000 and an astral character
    assert bare["int64_max"] == {"RDQ-UF-005"}
    assert bare["true"] == bare["array"] == frozenset()
    # text that stores commonly change (CHAR padding, trimming, CR, NFC) and a value
    # ending with the truncation marker
    for fragile in (" k ", "v  ", "a\r\nb", "e\u0301"):
        assert requirements_carried({fragile: "x"}, envelope=False) == {"RDQ-RT-006"}, fragile
    assert requirements_carried("m\u2026[truncated]", envelope=False) == {"RDQ-TR-003"}
    assert requirements_carried({"k": "plain text"}, envelope=False) == frozenset()
    assert requirements_carried(b"\xff", envelope=False) == {"RDQ-RT-008"}
    assert requirements_carried(b"ok", envelope=False) == frozenset()


def test_an_example_runs_after_what_it_carries() -> None:
    """A counters-as-Decimal store (every read) must fail RDQ-RT-004 first, and a store
    cutting timestamps RDQ-RT-007: the plain exact-types example runs first, the one
    with instants to the millisecond after the timestamp tests. A "" detail runs after
    RDQ-RT-010's first test, the every-type unknown fields after free text (RDQ-RT-006)."""
    items = [
        item("uf001-every", "RDQ-UF-001", carries=("RDQ-RT-006", "RDQ-RT-010")),
        item("rt006", "RDQ-RT-006", {"text": "\U0001f600"}),
        item("uf006-empty", "RDQ-UF-006", {"detail": ""}),
        item("uf006-true", "RDQ-UF-006", {"detail": True}),
        item("rt010", "RDQ-RT-010", {"written": [PLAIN]}),
        item("rt007", "RDQ-RT-007", {"instant": T0}),
        item("rt004-ms", "RDQ-RT-004", {"env": base_envelope(3)}),
        item("uf001", "RDQ-UF-001"),
        item("rt004-plain", "RDQ-RT-004", {"env": PLAIN}),
    ]
    examples_first(items)
    assert [i.name for i in items] == [
        "rt004-plain", "rt007", "rt004-ms", "rt010", "uf006-true", "uf006-empty", "uf001",
        "rt006", "uf001-every"]
    assert carried(items[0]) == frozenset()
    # among items at one place, the requirement of that place first (it carries less)
    (place, *_), own, _ = item_rank(items[1])
    assert item_rank(items[1])[0] == (place,) and own == place
    assert item_rank(items[2])[0][0] == place and item_rank(items[2])[1] < place


def test_a_value_at_two_limits_runs_after_the_tests_of_one() -> None:
    """A stack at its limit in a marker look-alike (RDQ-TR-003) reaches RDQ-TR-001's limit
    and RDQ-ST-005's 64 KiB; RDQ-TR-001's own stack case reaches 64 KiB only. Both run at
    RDQ-ST-005's place, RDQ-TR-001's first: a stack column one byte short fails RDQ-TR-001
    first (the zoo's stack_column_65535)."""
    stack = "m" * 65_536
    items = [
        item("tr003-at-limit", "RDQ-TR-003", {"value": stack[:-12] + "\u2026[truncated]"}),
        item("tr001-stack", "RDQ-TR-001", {"value": stack}),
        item("st005", "RDQ-ST-005"),
    ]
    assert carried(items[0]) == {"RDQ-TR-001", "RDQ-ST-005"}
    assert carried(items[1]) == {"RDQ-ST-005"}
    examples_first(items)
    assert [i.name for i in items] == ["st005", "tr001-stack", "tr003-at-limit"]


def test_narrow_examples_run_before_every_other_test() -> None:
    """What every envelope holds orders nothing (an instant, the version, the base
    envelope's dotted header key): the narrow examples, each judging its own
    requirement's differences only, run first, in table order; then the rest as
    before. Under ``-n N`` too, among the examples."""
    def items() -> list[Any]:
        return [
            item("rt007", "RDQ-RT-007", {"instant": T0}),
            item("rt009-narrow", "RDQ-RT-009", narrow=True),
            item("rt004-plain", "RDQ-RT-004", {"env": PLAIN}),
            item("ver001-narrow", "RDQ-VER-001", narrow=True),
            item("rt001-twin", "RDQ-RT-001", {"env": PLAIN}),
            item("rt004-narrow", "RDQ-RT-004", narrow=True),
            item("rt004-property", "RDQ-RT-004", kind="property"),
        ]
    ordered = items()
    examples_first(ordered)
    assert [i.name for i in ordered] == [
        "rt004-narrow", "rt009-narrow", "ver001-narrow", "rt004-plain", "rt007",
        "rt001-twin", "rt004-property"]
    spread = items()
    longest_first(spread)
    assert [i.name for i in spread][:3] == ["rt004-narrow", "rt009-narrow", "ver001-narrow"]
