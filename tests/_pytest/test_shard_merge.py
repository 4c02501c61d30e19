"""``--rdq-shard K/N`` and ``rdq-compliance merge``: the shards of a run, merged, give the
verdict, requirement statuses and causes of the unsharded run (issue 23)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from rdq_compliance._cli import main
from tests._pytest._standin import run
from tests.mutants._harness import run_kit

MUTANT = "tests.mutants.zoo:mysql_datetime_no_fsp"
PLUGINS = [f"--rdq-plugin={MUTANT}", "--rdq-plugin=memory"]


def _outcome(report: dict[str, Any]) -> dict[str, Any]:
    return {p["label"]: {
        "verdict": p["verdict"],
        "statuses": {r["id"]: r["status"] for r in p["requirements"]},
        # A cause's example, summary and the other fields it was seen at come from the
        # failing examples found, and which test is shrunk (one shrink per cause,
        # testing/_budget.py) depends on how the tests were dealt; what the cause is, and
        # which tests and requirements it explains, does not.
        "causes": [{k: v for k, v in c.items() if k not in ("example", "summary", "pointers")}
                   for c in p["causes"]],
    } for p in report["plugins"]}


@pytest.mark.slow_ci
def test_three_shards_merged_equal_the_unsharded_run(tmp_path: Path) -> None:
    whole = run_kit(PLUGINS, extra=["-p", "xdist", "-n", "2"])
    assert whole.report is not None, whole.describe()
    paths = []
    counts = []
    for k in (1, 2, 3):
        shard = run_kit(PLUGINS, extra=[f"--rdq-shard={k}/3", "--rdq-allow-incomplete"])
        assert shard.report is not None, shard.describe()
        assert any(n.startswith(f"shard {k}/3 (--rdq-shard)") for n in shard.report["notes"])
        counts.append(sum(len(r["tests"]) for p in shard.report["plugins"]
                          for r in p["requirements"]))
        path = tmp_path / f"shard{k}.json"
        path.write_text(json.dumps(shard.report))
        paths.append(str(path))
    total = sum(len(r["tests"]) for p in whole.report["plugins"] for r in p["requirements"])
    assert sum(counts) == total and max(counts) - min(counts) <= 4, counts  # balanced
    merged_path = tmp_path / "merged.json"
    assert main(["merge", *paths, "-o", str(merged_path)]) == 1  # the mutant: non-compliant
    merged = json.loads(merged_path.read_text())
    assert main(["verify", str(merged_path)]) == 0
    expected = _outcome(whole.report)
    assert expected[MUTANT]["verdict"] == "non-compliant"
    assert expected["memory"]["verdict"] == "compliant"
    assert _outcome(merged) == expected
    assert merged["verdict"] == whole.report["verdict"] == "non-compliant"
    # a shard missing: incomplete for the compliant plugin, never compliant
    assert main(["merge", paths[0], paths[2], "-o", str(merged_path)]) == 1
    partial = _outcome(json.loads(merged_path.read_text()))
    assert partial["memory"]["verdict"] == "incomplete"
    assert partial[MUTANT]["verdict"] == "non-compliant"


def test_a_bad_shard_is_a_usage_error(kit: pytest.Pytester) -> None:
    for value in ("0/3", "4/3", "1", "a/b"):
        result = run(kit, "--rdq-plugin=fake", f"--rdq-shard={value}")
        assert result.ret == pytest.ExitCode.USAGE_ERROR
        assert f"--rdq-shard='{value}' is not a shard; expected K/N" in result.stderr.str()


def test_shards_deal_the_kit_tests_once_each(kit: pytest.Pytester) -> None:
    kit.makepyfile(test_own="def test_mine():\n    assert True\n")
    seen: list[set[str]] = []
    for k in (1, 2):
        result = run(kit, "--rdq-plugin=fake", f"--rdq-shard={k}/2", "--collect-only", "-q")
        ids = {line for line in result.stdout.lines if "::" in line}
        assert "test_own.py::test_mine" in ids  # the user's own tests run in every shard
        seen.append(ids - {"test_own.py::test_mine"})
    whole = run(kit, "--rdq-plugin=fake", "--collect-only", "-q")
    every = {line for line in whole.stdout.lines if "::" in line} - {"test_own.py::test_mine"}
    assert seen[0] | seen[1] == every and not seen[0] & seen[1]
    assert abs(len(seen[0]) - len(seen[1])) <= 4
    machine = [i for i in every if "state_machine" in i]
    assert machine and all(sum(m in s for s in seen) == 1 for m in machine)


@pytest.mark.parametrize("xdist", [False, True], ids=["serial", "xdist"])
def test_a_shard_says_which_requirements_run_in_other_shards(
    kit: pytest.Pytester, xdist: bool
) -> None:
    """A shard's report names the other shards for a requirement whose tests all run
    there (never "deselected", which is for -k, -m and test ids, still said for those);
    with xdist the workers deal the tests and the controller writes the report."""
    extra = ["-p", "xdist", "-n", "2"] if xdist else []
    # memory, not the in-process stand-in: xdist workers load installed plugins only
    result = run(kit, "--rdq-plugin=memory", "--rdq-shard=1/3", "--rdq-allow-incomplete",
                 "-k", "not golden", "--rdq-report=r.json", *extra)
    assert result.ret == 0, result.stdout.str()[-3000:]
    report = json.loads((kit.path / "r.json").read_text())
    reasons = {r["id"]: r["reason"] for r in report["plugins"][0]["requirements"]
               if r["status"] == "not-run"}
    elsewhere = {rid: why for rid, why in reasons.items() if why.startswith("in other shards")}
    assert elsewhere, reasons
    for why in elsewhere.values():
        shards = why.removeprefix("in other shards: its tests run in shard ").split(",")[0]
        assert shards in ("2/3", "3/3"), why
        assert "this run is shard 1/3 (--rdq-shard); `rdq-compliance merge` of the 3 " in why
    golden = {rid: why for rid, why in reasons.items() if rid == "RDQ-GOLD-001"}
    assert golden and all(why.startswith("deselected: ") for why in golden.values()), golden
    assert set(reasons) == set(elsewhere) | set(golden), reasons
