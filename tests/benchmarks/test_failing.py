"""benchmarks/failing.py: reading a run's first failure, its arguments, its table."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks import failing
from benchmarks.run import Run

OUT = """\
.....F
=========================== short test summary info ============================
FAILED rdq_compliance/suites/test_roundtrip.py::test_timestamp_keeps_milliseconds[tests.mutants.zoo:mysql_datetime_no_fsp-leap-day] - CheckFailed
FAILED rdq_compliance/suites/test_roundtrip.py::test_generated_envelopes_roundtrip[tests.mutants.zoo:mysql_datetime_no_fsp] - CheckFailed
!!!!!!!!!!!!!!!!!!!!!!!!!! stopping after 1 failures !!!!!!!!!!!!!!!!!!!!!!!!!!!
1 failed, 5 passed in 1.02s
"""  # noqa: E501


def test_first_failing_test_drops_the_plugin_label() -> None:
    assert failing.first_failing_test(OUT) == "test_timestamp_keeps_milliseconds[leap-day]"
    assert failing.first_failing_test(OUT.replace("-leap-day]", "]")) == (
        "test_timestamp_keeps_milliseconds"
    )
    assert failing.first_failing_test("1 passed in 0.1s") == ""


def _run(wall: float, rc: int, out: str) -> Run:
    return Run(wall, wall, 100.0, rc, out, Path("."), 1.0)


def test_first_failure_table_names_the_slow_mutants(monkeypatch: pytest.MonkeyPatch) -> None:
    walls = {"fast_one": 1.0, "slow_one": 12.5, "missed_one": 2.0, "wrong_one": 1.5}
    monkeypatch.setattr(failing, "_mutants",
                        lambda only: [(m, ("RDQ-RT-007",)) for m in walls])
    nodeid = OUT.split("FAILED ", 1)[1].split(" ", 1)[0]

    def fake_run(args: list[str], **kw: object) -> Run:
        mutant = args[0].rpartition(":")[2]
        out = "1 passed in 1s" if mutant == "missed_one" else OUT
        owner = "RDQ-RT-004" if mutant == "wrong_one" else "RDQ-RT-007"
        report = {"plugins": [{"requirements": [{"id": owner, "tests": [{"nodeid": nodeid}]}],
                               "causes": [{"requirement": owner}]}]}
        cwd = kw["cwd"]
        assert isinstance(cwd, Path)
        (cwd / "report.json").write_text(json.dumps(report), encoding="utf-8")
        return _run(walls[mutant], 0 if mutant == "missed_one" else 1, out)

    monkeypatch.setattr(failing, "run_kit", fake_run)
    rows = "\n".join(failing.first_failure_rows([], "ci", None))
    assert "4 mutants" in rows and "median 1.75 s wall" in rows and "worst 12.50 s" in rows
    assert "over 10 s: 1" in rows and "| `slow_one` | 12.50 s | 12.50 s |" in rows
    # the first failed test's requirement, against what the mutant declares
    assert "first failed test of a declared requirement: 2 of 4" in rows
    assert "| `wrong_one` | 1.50 s | 1.50 s |" in rows and "| RDQ-RT-004 | RDQ-RT-007 |" in rows
    assert "fast_one" not in rows  # only the slow and the wrong ones are listed
    assert "Not caught by `-x` (exit 0): missed_one" in rows


def test_ratio_rows_interleave_and_divide(monkeypatch: pytest.MonkeyPatch) -> None:
    order: list[str] = []
    walls = {"bad": [30.0, 50.0, 40.0], "good": [20.0, 20.0, 20.0]}

    def fake_run(args: list[str], **kw: object) -> Run:
        label = args[0].rpartition(":")[2]
        order.append(label)
        return _run(walls[label].pop(0), 1 if label == "bad" else 0, "1 passed in 1s")

    monkeypatch.setattr(failing, "run_kit", fake_run)
    rows = failing.ratio_rows([("zoo:bad", "zoo:good")], 3, "ci")
    assert order == ["bad", "good"] * 3
    assert "| 40.00 s, 40.00 s | 20.00 s, 20.00 s | 2.00× | 2.00× | met |" in rows[-1]


def test_bad_pair_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        failing.main(["ratio", "--pair", "drop_unknown_error"])
    assert "--pair='drop_unknown_error': expected MUTANT:TWIN" in capsys.readouterr().err
