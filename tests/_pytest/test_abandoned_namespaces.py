"""After a hang the kit abandons the storage; the namespaces it held are dropped through
the fresh storage, and those that cannot be are named once, in the terminal and the report.

The stand-in's ``hang-once`` faults hang on the first read of the process (the storage is
abandoned after ``--rdq-timeout``); its call log shows which namespace was opened before
the hang and which were dropped after it.
"""

from __future__ import annotations

import fnmatch
import json

import pytest

from tests._pytest._standin import run

TWO_TESTS = ("-k", "test_payload_bytes_are_kept and (empty or one-byte)")
ONE_TEST = ("-k", "test_payload_bytes_are_kept and empty")


def _hang(kit: pytest.Pytester, fault: str, *args: str) -> tuple[pytest.RunResult, list[str]]:
    log = kit.path / "calls.log"
    result = run(kit, "--rdq-plugin=fake", f"--rdq-option=fault={fault}",
                 f"--rdq-option=log={log}", "--rdq-option=durable=yes", "--rdq-timeout=0.5",
                 "--rdq-report=report.json", *args, subprocess=True)
    assert "INTERNALERROR" not in result.stdout.str()
    return result, log.read_text(encoding="utf-8").splitlines()


def _hung_namespace(log: list[str]) -> str:
    """The namespace whose read hung: the first one read."""
    return next(line.split()[1] for line in log if line.startswith("read "))


def _drops_after_hang(log: list[str]) -> list[str]:
    first_read = next(i for i, line in enumerate(log) if line.startswith("read "))
    return [line.split()[1] for line in log[first_read + 1 :] if line.startswith("drop ")]


def _notes(kit: pytest.Pytester) -> list[str]:
    report = json.loads((kit.path / "report.json").read_text(encoding="utf-8"))
    notes: list[str] = report["notes"]
    return notes


def test_namespace_of_the_abandoned_storage_is_dropped_before_the_next_test(
    kit: pytest.Pytester,
) -> None:
    result, log = _hang(kit, "hang-once", *TWO_TESTS)
    result.assert_outcomes(failed=1, passed=1)
    hung = _hung_namespace(log)
    assert f"open {hung}" in " ".join(log)  # opened before the hang
    after = _drops_after_hang(log)
    assert after and after[0] == hung, log  # dropped first thing, through the fresh storage
    assert not any("left behind" in n for n in _notes(kit))
    assert "left behind" not in result.stdout.str()


def test_namespace_of_a_hang_in_the_last_test_is_dropped_at_session_end(
    kit: pytest.Pytester,
) -> None:
    result, log = _hang(kit, "hang-once", *ONE_TEST)
    result.assert_outcomes(failed=1)
    hung = _hung_namespace(log)
    assert _drops_after_hang(log) == [hung], log
    assert not any("left behind" in n for n in _notes(kit))


@pytest.mark.parametrize(
    ("fault", "why", "passed"),
    [
        ("hang-once-drop-raises", "storage.drop('{ns}') raised RuntimeError: no namespace {ns} "
         "here", 1),
        ("hang-once-drop-hangs", "storage.drop('{ns}') did not return within 0.5 s", 1),
        ("hang-once-reopen-fails", "no storage to drop it on (plugin 'fake': "
         "rdq_storage_open(options) raised RuntimeError: standin cannot start)", 0),
    ],
)
def test_namespace_that_cannot_be_dropped_is_named_once(
    kit: pytest.Pytester, fault: str, why: str, passed: int
) -> None:
    result, log = _hang(kit, fault, *TWO_TESTS)
    # the second test passes on the fresh storage, or errors when there is none
    result.assert_outcomes(failed=1, passed=passed, errors=1 - passed)
    hung = _hung_namespace(log)
    expected = (
        f"plugin 'fake': 1 namespace left behind in the store: a storage was abandoned after "
        f"a hang and the kit could not drop it ('{hung}': {why.format(ns=hung)}); "
        "drop it by hand (storage.drop(name)) or clear the store"
    )
    left = [n for n in _notes(kit) if "left behind" in n]
    assert len(left) == 1 and _matches(left[0], expected), left
    terminal = [ln for ln in result.stdout.lines if "left behind" in ln]
    assert len(terminal) == 1 and _matches(terminal[0], f"note: {expected}"), terminal


def test_workers_notes_reach_the_controller_report(kit: pytest.Pytester) -> None:
    result, log = _hang(kit, "hang-once-drop-raises", "-n", "2", *TWO_TESTS)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    left = [n for n in _notes(kit) if "left behind" in n]
    # Each worker hangs on its first read, wherever xdist sent the two tests: the
    # first read of the log is one of those.
    assert left and f"'{_hung_namespace(log)}'" in " ".join(left), (left, log)
    assert any("reopened after" in n for n in _notes(kit))
    result.stdout.fnmatch_lines(["*note: plugin 'fake': 1 namespace left behind in the store*"])


def _matches(text: str, pattern: str) -> bool:
    return fnmatch.fnmatchcase(text, pattern.replace("[", "[[]"))
