"""``examples_first`` / ``longest_first``: how the kit orders its own tests.

Fake items stand for pytest items: ``.module.__name__`` says whether an item is a kit
test, ``.function.__code__.co_names`` whether its body calls ``rdq.for_all`` (a property)
or ``rdq.run_machine`` (the state machine), and a ``slow=True`` on its requirement marker
whether the suite lists it among the longest properties.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from rdq_compliance._pytest.kit import MARKER, SUITE_MODULE_PREFIX, examples_first, longest_first

KIT_MODULE = SUITE_MODULE_PREFIX + "test_roundtrip"


def _example(rdq: Any) -> None:
    rdq.namespace().roundtrip(None)


def _property(rdq: Any) -> None:
    rdq.for_all(print)


def _machine(rdq: Any) -> None:
    rdq.run_machine(object)


BODIES = {"example": _example, "property": _property, "slow": _property, "machine": _machine}


def item(name: str, kind: str = "example", module: str | None = KIT_MODULE) -> Any:
    """A fake item; ``kind`` is example, property, slow (a property marked slow),
    machine or none (no function)."""
    fake = SimpleNamespace(name=name)
    if module is not None:
        fake.module = SimpleNamespace(__name__=module)
    if kind != "none":
        fake.function = BODIES[kind]
    mark = SimpleNamespace(args=("RDQ-RT-001",), kwargs={"slow": True} if kind == "slow" else {})
    fake.get_closest_marker = lambda name: mark if name == MARKER else None
    return fake


def names(items: list[Any]) -> list[str]:
    return [i.name for i in items]


def test_the_fake_bodies_name_what_the_kit_looks_for() -> None:
    assert "for_all" in _property.__code__.co_names
    assert "run_machine" in _machine.__code__.co_names
    assert not {"for_all", "run_machine"} & set(_example.__code__.co_names)


def mixed() -> list[Any]:
    return [
        item("user1", module="tests.test_mine"),
        item("prop_a", "property"),
        item("ex_a"),
        item("machine", "machine"),
        item("user2", "property", module="tests.test_mine"),  # the user's own property
        item("ex_b"),
        item("prop_b", "property"),
        item("slow_a", "slow"),
        item("doctest", module=None),  # no module at all (e.g. a doctest item)
        item("ex_c", "none"),  # a kit item without a function: a fixed example
        item("near", "property", module="rdq_compliance.suites_extra.test_x"),  # not the prefix
    ]


def test_examples_first() -> None:
    items = mixed()
    examples_first(items)
    assert names(items) == ["user1", "ex_a", "ex_b", "ex_c", "user2", "prop_a", "machine",
                            "prop_b", "doctest", "slow_a", "near"]


def test_longest_first() -> None:
    items = mixed()
    longest_first(items)
    assert names(items) == ["user1", "ex_a", "ex_b", "ex_c", "user2", "machine", "slow_a",
                            "prop_a", "doctest", "prop_b", "near"]


def test_orders_are_idempotent() -> None:
    for order in (examples_first, longest_first):
        once = mixed()
        order(once)
        twice = list(once)
        order(twice)
        assert names(twice) == names(once)


KINDS = st.sampled_from(["example", "property", "slow", "machine", "none"])
MODULES = st.sampled_from([KIT_MODULE, SUITE_MODULE_PREFIX + "test_storage", "tests.test_mine",
                           None])
RANK = {"machine": 0, "slow": 1, "property": 2, "example": 3, "none": 3}


@settings(max_examples=200, deadline=None, database=None)
@given(st.lists(st.tuples(KINDS, MODULES), max_size=30))
def test_reordering_properties(spec: list[tuple[str, str | None]]) -> None:
    original = [item(f"i{n}", kind, module) for n, (kind, module) in enumerate(spec)]
    kit = {i.name for i, (_, module) in zip(original, spec, strict=True)
           if module is not None and module.startswith(SUITE_MODULE_PREFIX)}
    rank = {i.name: RANK[kind] for i, (kind, _) in zip(original, spec, strict=True)}
    keys = {
        examples_first: lambda n: rank[n] < 3,
        longest_first: lambda n: (rank[n] + 1) % 4,
    }
    results = {}
    for order, key in keys.items():
        items = list(original)
        order(items)
        results[order] = items
        # the same items, each once
        assert sorted(map(id, items)) == sorted(map(id, original))
        # the user's items keep their positions
        assert [(p, i.name) for p, i in enumerate(items) if i.name not in kit] == [
            (p, i.name) for p, i in enumerate(original) if i.name not in kit
        ]
        # the kit's items: ordered by the key, stable (ties keep the collection order)
        kit_order = [i.name for i in items if i.name in kit]
        assert kit_order == sorted((i.name for i in original if i.name in kit), key=key)
    # both orders agree on the set of items, and on where the kit's items sit
    a, b = results[examples_first], results[longest_first]
    assert {id(i) for i in a} == {id(i) for i in b}
    assert [i.name in kit for i in a] == [i.name in kit for i in b]
