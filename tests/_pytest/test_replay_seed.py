"""Failing cases are saved and replayed exactly; the same seed gives the same examples."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rdq_compliance.suites._names import PAIRS
from tests._pytest._standin import run


def _case_files(root: Path, test: str) -> list[Path]:
    return sorted(root.glob(f"{test}-*.json"))


def _replay_line(result: pytest.RunResult) -> str:
    lines = [ln.strip() for ln in result.stdout.lines if "replay: pytest" in ln]
    assert lines, result.stdout.str()
    return lines[0].split("replay: ", 1)[1]


def test_failing_property_is_saved_and_replayed(kit: pytest.Pytester) -> None:
    test = "test_generated_timestamps_keep_milliseconds"
    result = run(kit, "--rdq-plugin=fake", "--rdq-option=fault=drop-ms", "-k", test,
                 "--rdq-failures-dir=cases")
    result.assert_outcomes(failed=1)
    files = _case_files(kit.path / "cases", test)
    assert len(files) == 1
    assert _replay_line(result) == (
        f"pytest --rdq-plugin=fake --rdq-option=fault=drop-ms --rdq-replay cases/{files[0].name}"
    )
    case = json.loads(files[0].read_text())
    assert case["requirement"] == "RDQ-RT-007" and case["plugin"] == "fake"
    assert case["check"] == "roundtrip" and set(case["example"]) == {"env"}
    written = case["example"]["env"]["$envelope"]
    assert case["envelopes"] == [written]  # the minimal envelope, as canonical JSON

    # Replay: only that test, only that example (one write of that very id).
    log = kit.path / "replay.log"
    again = run(kit, "--rdq-plugin=fake", "--rdq-option=fault=drop-ms",
                f"--rdq-option=log={log}", "--rdq-replay", str(files[0]))
    again.assert_outcomes(failed=1)
    assert "deselected" in again.stdout.str()
    writes = [ln.split() for ln in log.read_text().splitlines() if ln.startswith("write")]
    assert [w[2] for w in writes] == [written["id"]]
    assert _case_files(kit.path / "cases", test) == files  # replay saves nothing new

    # Once the plugin is fixed, the replayed case passes.
    fixed = run(kit, "--rdq-plugin=fake", "--rdq-replay", str(files[0]))
    fixed.assert_outcomes(passed=1)


def test_failing_parametrized_test_is_replayed_with_its_parameter(kit: pytest.Pytester) -> None:
    result = run(kit, "--rdq-plugin=fake", "--rdq-option=fault=drop-ms",
                 "-k", "test_timestamp_keeps_milliseconds and leap")
    result.assert_outcomes(failed=1)
    path = _replay_line(result).split("--rdq-replay ")[1]
    case = json.loads((kit.path / path).read_text())
    assert case["params"] == {"id": "leap-day"}
    again = run(kit, "--rdq-plugin=fake", "--rdq-option=fault=drop-ms", "--rdq-replay", path,
                "-v")
    again.assert_outcomes(failed=1)
    again.stdout.fnmatch_lines(["*test_timestamp_keeps_milliseconds[[]fake-leap-day[]] FAILED*"])


def test_failing_state_machine_is_replayed_from_its_steps(kit: pytest.Pytester) -> None:
    test = "test_state_machine_agrees_with_model"
    result = run(kit, "--rdq-plugin=fake", "--rdq-option=fault=forgetful", "-k", test)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*RDQ-ST-006*", "*returned None, expected the envelope written*"])
    path = _replay_line(result).split("--rdq-replay ")[1]
    case = json.loads((kit.path / path).read_text())
    assert case["check"] == "machine" and case["example"]["ops"]
    assert case["example"]["shape"] in PAIRS  # the names' shape is replayed too (C14)
    again = run(kit, "--rdq-plugin=fake", "--rdq-option=fault=forgetful", "--rdq-replay", path)
    again.assert_outcomes(failed=1)
    again.stdout.fnmatch_lines(["*RDQ-ST-006*", "*returned None, expected the envelope written*"])
    fixed = run(kit, "--rdq-plugin=fake", "--rdq-replay", path)
    fixed.assert_outcomes(passed=1)
    # A replay is a partial run on purpose: its exit status is the replayed case's.
    assert fixed.ret == pytest.ExitCode.OK


def test_replay_for_another_plugin_is_a_usage_error(kit: pytest.Pytester) -> None:
    result = run(kit, "--rdq-plugin=fake", "--rdq-option=fault=drop-ms",
                 "-k", "test_timestamp_keeps_milliseconds and leap")
    path = _replay_line(result).split("--rdq-replay ")[1]
    other = run(kit, "--rdq-plugin=standin:plugin", "--rdq-replay", path)
    assert other.ret == pytest.ExitCode.USAGE_ERROR
    assert any("was saved for plugin 'fake'; run it with --rdq-plugin=fake" in ln
               for ln in other.stderr.lines)


def _drawn_ids(kit: pytest.Pytester, seed: str, name: str) -> list[str]:
    log = kit.path / f"{name}.log"
    result = run(kit, "--rdq-plugin=fake", f"--rdq-option=log={log}", f"--rdq-seed={seed}",
                 "-k", "test_generated_envelopes_roundtrip or test_state_machine")
    result.assert_outcomes(passed=2)
    return [ln.split()[2] for ln in log.read_text().splitlines() if ln.startswith("write")]


def test_same_seed_gives_the_same_examples(kit: pytest.Pytester) -> None:
    first = _drawn_ids(kit, "5", "a")
    assert len(first) >= 10
    assert _drawn_ids(kit, "5", "b") == first
    assert _drawn_ids(kit, "6", "c") != first
