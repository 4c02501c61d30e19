"""One shrink per cause (issue 21 §3): signatures, and the kit cutting a search short."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

# The kit and Hypothesis imported before any in-process pytester run (tests/_pytest/conftest.py
# says why).
import hypothesis.stateful  # noqa: F401
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.errors import UnsatisfiedAssumption

import rdq_compliance._pytest.kit
import rdq_compliance.strategies
import rdq_compliance.suites._strategies  # noqa: F401
from rdq_compliance.reporting._symptom import Symptom
from rdq_compliance.testing import _properties
from rdq_compliance.testing._budget import Established, Unshrunk, failure_signature
from rdq_compliance.testing._failures import CheckFailed
from tests._pytest._standin import STANDIN, install_fake_dist, run


@pytest.fixture
def kit(pytester: pytest.Pytester) -> pytest.Pytester:
    """The stand-in plugin installed as ``fake`` (as in tests/_pytest/conftest.py)."""
    pytester.makepyfile(standin=STANDIN)
    install_fake_dist(pytester.path, "fakeplugin", {"fake": "standin:plugin"})
    pytester.syspathinsert()
    return pytester


def _failed(summary: str, symptom: Symptom | None = None) -> CheckFailed:
    exc = CheckFailed(f"RDQ-RT-007 [MUST; C3] title\nplugin 'fake': {summary}\ndetail")
    exc.symptom = symptom
    return exc


def _symptom(pointer: str, pattern: str, kind: str = "instant changed") -> Symptom:
    return Symptom(pointer, pattern, kind, "C3", f"{kind} by -117 ms", "diff")


def test_signature_of_a_difference_is_its_kind_and_place() -> None:
    top = _failed("created_at differs", _symptom("/created_at", "/created_at"))
    attempt = _failed("x", _symptom("/attempts/3/started_at", "/attempts/*/started_at"))
    # The envelope's own fields are one place (as the root causes group them) ...
    assert failure_signature(top) == failure_signature(attempt)
    # ... a generated key counts its parent object; another kind is another cause.
    lost_top = _symptom("/x-a", "/*", "unknown field missing")
    lost_error = _symptom("/attempts/0/error/x-b", "/attempts/*/error/*", "unknown field missing")
    assert failure_signature(_failed("a", lost_top)) != failure_signature(
        _failed("a", lost_error))
    assert failure_signature(top) != failure_signature(_failed("a", lost_top))


def test_signature_of_a_string_defect_is_its_nature_wherever_it_shows() -> None:
    """Issue 21 §2: U+0000 stripped from a header value and from the error message is one
    cause (shrunk once); NFC at the same place is another."""
    def text(pointer: str, pattern: str, change: str) -> CheckFailed:
        return _failed("x", Symptom(pointer, pattern, "string changed", "C4", "s", "d",
                                    difference="text", change=change))

    header = text("/headers/k", "/headers/*", "U+0000 stripped")
    message = text("/attempts/0/error/message", "/attempts/*/error/message", "U+0000 stripped")
    assert failure_signature(header) == failure_signature(message)
    assert failure_signature(header) != failure_signature(
        text("/headers/k", "/headers/*", "normalised to NFC"))


def test_signature_of_other_failures_masks_the_variable_parts() -> None:
    # The kit's own message for a plugin's exception: operation, type, masked message.
    one = failure_signature(_failed("write('01J2ZK7Q8XW5H3N9G4T6B8H103') raised KeyError: "
                                    "'no row for 1f'"))
    assert one == failure_signature(_failed("write('01J2ZK7Q8XW5H3N9G4T6B8H104') raised "
                                            "KeyError: 'no row for 2c'"))
    assert one != failure_signature(_failed("read('01J2ZK7Q8XW5H3N9G4T6B8H104') raised "
                                            "KeyError: 'no row for 2c'"))
    # Not a check failure: the exception's type and masked first line, as the root
    # causes group it (one signature for both, whatever the number).
    twelve = failure_signature(ValueError("bad length 12\nmore"))
    assert twelve == failure_signature(ValueError("bad length 13"))
    assert twelve is not None and "ValueError" in twelve and "12" not in twelve
    assert twelve != failure_signature(KeyError("bad length 12"))
    assert failure_signature(ExceptionGroup("lanes", [ValueError("x"), _failed("y")])) == (
        failure_signature(_failed("y"))
    )
    # Hypothesis steering the search, and pytest outcomes, are no failures: never cut.
    assert failure_signature(UnsatisfiedAssumption()) is None
    assert failure_signature(KeyboardInterrupt()) is None


# -- the kit end to end ------------------------------------------------------------------

CASES = {
    # Timestamps lose their milliseconds: two properties fail with that one cause.
    "drop-ms": ("test_generated_envelopes_roundtrip",
                "test_generated_timestamps_keep_milliseconds"),
    # Unknown top-level fields are dropped: a property and the state machine.
    "drop-unknown-fields": ("test_generated_top_level_unknown_fields",
                            "test_state_machine_agrees_with_model"),
}
REQUIREMENT = {
    "test_generated_envelopes_roundtrip": "RDQ-RT-001",
    "test_generated_timestamps_keep_milliseconds": "RDQ-RT-007",
    "test_generated_top_level_unknown_fields": "RDQ-UF-001",
    "test_state_machine_agrees_with_model": "RDQ-ST-006",
}


def _writes(log: Path) -> int:
    return sum(1 for ln in log.read_text().splitlines() if ln.startswith("write"))


def _section(result: pytest.RunResult, test: str) -> str:
    """The failure section of ``test`` in the output."""
    text = result.stdout.str()
    start = text.index(f"_ {test}[")
    end = text.find("\n____", start + 1)
    return text[start:] if end < 0 else text[start:end]


def _run(
    kit: pytest.Pytester, fault: str, name: str, select: str
) -> tuple[pytest.RunResult, int, Path]:
    """The kit on the stand-in with ``fault`` (ci profile): (result, plugin writes, the
    directory of saved cases)."""
    log, cases = kit.path / f"{name}.log", kit.path / f"{name}-cases"
    result = run(kit, "--rdq-plugin=fake", f"--rdq-option=fault={fault}",
                 f"--rdq-option=log={log}", "-k", select, f"--rdq-failures-dir={cases}",
                 profile="ci")
    return result, _writes(log), cases


def _case(cases: Path, test: str) -> dict[str, Any]:
    saved = list(cases.glob(f"{test}-*.json"))
    assert len(saved) == 1, saved
    return dict(json.loads(saved[0].read_text()))


@pytest.mark.parametrize("fault", sorted(CASES))
def test_a_cause_is_shrunk_once_and_later_failures_of_it_are_not(
    kit: pytest.Pytester, fault: str
) -> None:
    """One defect, two properties (or a property and the state machine) failing with the
    same cause. The first to run is shrunk to the same minimal example as when it runs
    alone; the other stops at its first failing example, says so, costs far fewer plugin
    calls than shrinking it alone, and still fails with a saved case that replays."""
    PROPERTIES = CASES[fault]
    both, both_writes, cases = _run(kit, fault, "both", " or ".join(PROPERTIES))
    both.assert_outcomes(failed=2)
    later = [t for t in PROPERTIES if "not shrunk again" in _section(both, t)]
    assert len(later) == 1, both.stdout.str()
    (first,) = set(PROPERTIES) - set(later)
    second = later[0]
    note = _section(both, second).split("same cause as ", 1)[1].splitlines()[0]
    assert note.startswith("rdq_compliance/suites/test_") and f"::{first}[fake]: " in note
    # Its own requirement and message, as before.
    assert f"{REQUIREMENT[second]} [MUST; " in _section(both, second)

    first_alone, first_writes, first_cases = _run(kit, fault, "first", first)
    first_alone.assert_outcomes(failed=1)
    # The first failure is shrunk exactly as without the mechanism: the same minimal case.
    assert _case(cases, first)["example"] == _case(first_cases, first)["example"]

    second_alone, second_writes, _ = _run(kit, fault, "second", second)
    second_alone.assert_outcomes(failed=1)
    assert "not shrunk again" not in second_alone.stdout.str()
    # What the second property cost in the run of both, against shrinking it alone.
    second_cost = both_writes - first_writes
    assert 0 < second_cost * 3 < second_writes, (second_cost, second_writes)

    # The unshrunk failure's case is saved and replays to the same failure.
    case = _case(cases, second)
    assert case["check"] and case["example"]
    saved = next(cases.glob(f"{second}-*.json"))
    again = run(kit, "--rdq-plugin=fake", f"--rdq-option=fault={fault}", "--rdq-replay",
                str(saved))
    again.assert_outcomes(failed=1)
    fixed = run(kit, "--rdq-plugin=fake", "--rdq-replay", str(saved))
    fixed.assert_outcomes(passed=1)


def test_shrink_stops_after_its_budget_of_calls(monkeypatch: pytest.MonkeyPatch) -> None:
    """A shrink that would take many calls stops SHRINK_CALLS calls after the first
    failure, with the last failing example (not minimal) and a note saying so."""
    calls: list[bool] = []  # one per call: did it fail?
    drawn: dict[str, Any] = {}

    def check(xs: list[int]) -> None:
        drawn["xs"] = xs
        calls.append(sum(xs) > 1000)
        assert not calls[-1], f"sum {sum(xs)}"

    def run_with(cap: int) -> BaseException:
        calls.clear()
        monkeypatch.setattr(_properties, "SHRINK_CALLS", cap)
        guard = _properties._Guard(drawn, Established(), "t::a")
        test = settings(database=None, derandomize=True, max_examples=200)(
            given(xs=st.lists(st.integers(0, 10_000), min_size=5))(guard.wrap(check)))
        with pytest.raises(BaseException) as info:
            test()
        return info.value

    full = run_with(10_000)
    full_calls = len(calls)
    assert isinstance(full, AssertionError) and full_calls > 40  # a long shrink
    cut = run_with(5)
    assert isinstance(cut, Unshrunk) and "shrinking stopped after 5 examples" in cut.note
    assert len(calls) == calls.index(True) + 1 + 5  # the first failure, then 5 more calls
    assert isinstance(cut.failure, AssertionError) and sum(cut.drawn["xs"]) > 1000
    assert cut.drawn["xs"] != [0, 0, 0, 0, 1001]  # not the minimal example


def test_an_established_signature_stops_at_the_first_failing_example() -> None:
    causes = Established()
    causes.establish(failure_signature(ValueError("too big 0")), "t::first")
    calls: list[bool] = []

    def check(n: int) -> None:
        calls.append(n > 10)
        if calls[-1]:
            raise ValueError(f"too big {n}")

    guard = _properties._Guard({}, causes, "t::second")
    test = settings(database=None, derandomize=True)(given(n=st.integers())(guard.wrap(check)))
    with pytest.raises(Unshrunk) as info:
        test()
    assert "same cause as t::first: not shrunk again" in info.value.note
    assert isinstance(info.value.failure, ValueError)
    assert calls.index(True) == len(calls) - 1  # no call after the first failure

    # The test that established it is shrunk as usual (to the minimal n = 11).
    calls.clear()
    own = _properties._Guard({}, causes, "t::first")
    test = settings(database=None, derandomize=True)(given(n=st.integers())(own.wrap(check)))
    with pytest.raises(ValueError, match=r"^too big 11\n"):
        test()


def test_a_new_cause_found_first_is_not_cut_by_an_established_one() -> None:
    """A search that first fails with a new signature shrinks it as usual, even when
    its shrink runs into failures of an established cause."""
    causes = Established()
    causes.establish(failure_signature(ValueError("old 0")), "t::first")
    failures: list[str] = []

    def check(n: int) -> None:
        if n > 1000:
            failures.append("new" if n % 2 else "old")
            raise ValueError(f"{failures[-1]} {n}")

    guard = _properties._Guard({}, causes, "t::second")
    test = settings(database=None, derandomize=True)(given(n=st.integers())(guard.wrap(check)))
    with pytest.raises(BaseException) as info:
        test()
    assert failures[0] == "new" and "old" in failures  # the shrink met the old cause ...
    assert not isinstance(info.value, Unshrunk)  # ... and was not cut short by it


def test_a_long_machine_shrink_stops_at_the_budget(
    kit: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A store that forgets every write: the state machine's shrink runs past the budget
    and ends at the next failing example, which is reported (and saved) as the failure.
    A budget of 5 examples: how long the whole shrink takes depends on the machine's rules,
    and the test is about the cut, not about that length."""
    monkeypatch.setattr(_properties, "SHRINK_CALLS", 5)
    test = "test_state_machine_agrees_with_model"
    result = run(kit, "--rdq-plugin=fake", "--rdq-option=fault=forgetful", "-k", test,
                 "--rdq-failures-dir=cases")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "*RDQ-ST-006*", "*returned None, expected the envelope written*",
        f"*shrinking stopped after {_properties.SHRINK_CALLS} examples: the shrink budget*",
    ])
    case = _case(kit.path / "cases", test)
    assert case["check"] == "machine" and case["example"]["ops"]
