"""``examples_first`` / ``longest_first``: how the kit orders its own tests.

Fake items stand for pytest items: ``.module.__name__`` says whether an item is a kit
test; its requirement marker says whether it is a fixed example, a property
(``kind="property"``) or the state machine (``kind="machine"``), and ``slow=True``
whether the suite lists it among the longest properties. Among examples, the most
specific requirement runs first (issue 14 §2): see ``test_specific_requirement_first``.
"""

from __future__ import annotations

import ast
from types import SimpleNamespace
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from rdq_compliance._pytest.kit import (
    MARKER,
    SUITE_MODULE_PREFIX,
    examples_first,
    longest_first,
    specificity,
)
from tests._pytest._suite_functions import suite_test_functions

KIT_MODULE = SUITE_MODULE_PREFIX + "test_roundtrip"
MARK_KWARGS = {"example": {}, "none": {}, "property": {"kind": "property"},
               "slow": {"kind": "property", "slow": True}, "machine": {"kind": "machine"}}


def item(name: str, kind: str = "example", module: str | None = KIT_MODULE,
         requirement: str = "RDQ-RT-001") -> Any:
    """A fake item; ``kind`` is example, property, slow (a property marked slow),
    machine or none (no marker kwargs at all)."""
    fake = SimpleNamespace(name=name)
    if module is not None:
        fake.module = SimpleNamespace(__name__=module)
    mark = SimpleNamespace(args=(requirement,), kwargs=MARK_KWARGS[kind])
    fake.get_closest_marker = lambda name: mark if name == MARKER else None
    return fake


def names(items: list[Any]) -> list[str]:
    return [i.name for i in items]


def test_suite_markers_say_what_the_test_body_runs() -> None:
    """The explicit ``kind`` of every suite test agrees with its body: a property calls
    ``rdq.for_all``, the state machine ``rdq.run_machine`` (checked here, in the kit's
    own tests, so that the kit never has to guess from bytecode)."""
    checked = 0
    for path, node, declared in suite_test_functions():
        calls = {n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)}
        body = ("machine" if "run_machine" in calls
                else "property" if "for_all" in calls else "example")
        assert declared == body, f"{path.name}::{node.name}: kind={declared!r}, body {body}"
        checked += 1
    assert checked > 40


def test_specific_requirement_first() -> None:
    """Issue 21 §2: the diagnosis table orders the tests. What every envelope carries
    first: model types (RDQ-RT-004: every read), timestamps (RDQ-RT-007), null against
    empty values (RDQ-RT-010), detail (RDQ-UF-006), the unknown fields of the error
    object; then attempts, headers, free text, deep nesting (RDQ-UF-007, which carries
    them); rewrites (RDQ-ST-001) late, the golden corpus last among the examples."""
    items = [item("gold", requirement="RDQ-GOLD-001"), item("rt004", requirement="RDQ-RT-004"),
             item("rt006", requirement="RDQ-RT-006"), item("rt010", requirement="RDQ-RT-010"),
             item("uf007", requirement="RDQ-UF-007"), item("uf003", requirement="RDQ-UF-003"),
             item("uf006", requirement="RDQ-UF-006"), item("rt009", requirement="RDQ-RT-009"),
             item("rt007", requirement="RDQ-RT-007"), item("st001", requirement="RDQ-ST-001"),
             item("rt005", requirement="RDQ-RT-005"),
             item("rt001", "slow", requirement="RDQ-RT-001"),
             item("rt007p", "property", requirement="RDQ-RT-007")]
    expected = ["rt004", "rt007", "rt010", "uf006", "uf003", "rt005", "rt009", "rt006",
                "uf007", "st001", "gold"]
    for order in (examples_first, longest_first):
        got = list(items)
        order(got)
        assert names(got)[:11] == expected, order.__name__
    examples_first(items)
    assert names(items)[11:] == ["rt007p", "rt001"]
    assert specificity(item("x", requirement="RDQ-NOPE-001")) > specificity(items[0])


def test_the_order_is_the_tables() -> None:
    """The rank of a requirement is its first row in DEFECT_RULES: moving a row moves
    the tests (no second list of clauses decides the order)."""
    from rdq_compliance.envelope import _diagnosis

    rows = _diagnosis.DEFECT_RULES
    first = next(n for n, r in enumerate(rows) if r.requirement == "RDQ-UF-003")
    assert specificity(item("a", requirement="RDQ-UF-003"))[0] == first
    swapped = (rows[first], *rows[:first], *rows[first + 1:])
    try:
        _diagnosis.DEFECT_RULES = swapped  # type: ignore[misc]
        items = [item("rt007", requirement="RDQ-RT-007"), item("uf003", requirement="RDQ-UF-003")]
        examples_first(items)
        assert names(items) == ["uf003", "rt007"]
    finally:
        _diagnosis.DEFECT_RULES = rows  # type: ignore[misc]


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
        item("ex_c", "none"),  # a kit item with a bare marker: a fixed example
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


def test_k_with_an_unknown_requirement_id_lists_the_closest(kit: Any) -> None:
    """Issue 21 §7: ``-k RDQ-RT-099`` selects nothing of the kit; the run says so (a usage
    error, exit status 4) and names the closest ids; a known id in any case runs."""
    result = kit.runpytest("-p", "no:cacheprovider", "--rdq-plugin=fake", "-k", "RDQ-RT-0077")
    assert result.ret == 4, result.stdout.str()
    (line,) = [ln for ln in result.stderr.lines if ln.startswith("ERROR:")]
    assert "'RDQ-RT-0077' is no requirement id of this kit; closest: RDQ-RT-007" in line
    assert "Traceback" not in result.stderr.str()
    ok = kit.runpytest("-p", "no:cacheprovider", "--rdq-plugin=fake", "--rdq-profile=quick",
                       "-k", "rdq-st-002")
    assert ok.ret in (0, 1) and "no requirement id" not in ok.stderr.str()


def test_the_longest_properties_come_from_the_measured_costs() -> None:
    """One table says which kit tests are long (``_costs.COSTS``): a property at
    least ``SLOW`` seconds ranks as one of the longest without a ``slow`` flag, a
    cheaper one does not, and ``slow=True`` still ranks a test the table does not know."""
    from rdq_compliance._pytest._costs import COSTS, SLOW
    from rdq_compliance._pytest._ordering import cost_rank

    long = item("long", "property")
    long.nodeid = "rdq_compliance/suites/test_roundtrip.py::test_generated_envelopes_roundtrip[x]"
    short = item("short", "property")
    short.nodeid = "rdq_compliance/suites/test_unknown_fields.py::test_generated_detail[x]"
    assert COSTS["test_generated_envelopes_roundtrip"] >= SLOW > COSTS["test_generated_detail"]
    assert (cost_rank(long), cost_rank(short), cost_rank(item("mine", "slow"))) == (1, 2, 1)

