"""The repository's GitHub Action: action.yml and its script, run with GitHub's variables
faked (GITHUB_WORKSPACE, GITHUB_STEP_SUMMARY, GITHUB_OUTPUT, GITHUB_ACTIONS)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
ACTION = yaml.safe_load((REPO / "action.yml").read_text(encoding="utf-8"))


def test_every_input_reaches_the_script() -> None:
    steps = ACTION["runs"]["steps"]
    assert ACTION["runs"]["using"] == "composite"
    run = next(s for s in steps if s.get("id") == "run")
    assert run["run"] == "python -m rdq_compliance._action"
    env = run["env"]
    for name in ACTION["inputs"]:
        if name == "artifact-name":
            continue
        key = "INPUT_" + name.upper().replace("-", "_")
        assert env.get(key) == f"${{{{ inputs.{name} }}}}", (name, env)
    source = (REPO / "rdq_compliance/_action.py").read_text(encoding="utf-8")
    assert all(f'"{name}"' in source for name in ACTION["inputs"] if name != "artifact-name")
    # the kit with pytest-xdist, the files uploaded whatever happened, then the gate
    assert steps[0]["run"] == 'pip install "$GITHUB_ACTION_PATH[xdist]"'
    upload = next(s for s in steps if s.get("uses", "").startswith("actions/upload-artifact"))
    assert upload["if"] == "always()"
    assert steps[-1]["run"] == 'exit "${{ steps.run.outputs.exit-code || 1 }}"'


def _run(tmp_path: Path, **inputs: str) -> tuple[subprocess.CompletedProcess[str], dict[str, str],
                                                 Path]:
    ws = tmp_path / "ws"
    ws.mkdir()
    summary, output = tmp_path / "summary.md", tmp_path / "output"
    summary.touch()
    output.touch()
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYTEST_", "INPUT_", "GITHUB_", "RDQ_"))}
    env.update(GITHUB_ACTIONS="true", GITHUB_WORKSPACE=str(ws), GITHUB_STEP_SUMMARY=str(summary),
               GITHUB_OUTPUT=str(output), PYTHONPATH=str(REPO))
    env.update({"INPUT_" + k.upper(): v for k, v in inputs.items()})
    done = subprocess.run([sys.executable, "-m", "rdq_compliance._action"], cwd=ws, env=env,
                          capture_output=True, text=True, timeout=900)
    outputs = dict(line.split("=", 1) for line in output.read_text().splitlines())
    return done, outputs, ws


def _report(outputs: dict[str, str]) -> dict[str, Any]:
    report: dict[str, Any] = json.loads(Path(outputs["report"]).read_text())
    return report


def test_a_compliant_plugin(tmp_path: Path) -> None:
    done, outputs, ws = _run(tmp_path, plugin="memory", profile="quick", workers="0")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert outputs["verdict"] == "compliant" and outputs["exit-code"] == "0", outputs
    assert _report(outputs)["profile"] == "quick"
    assert Path(outputs["badge"]).read_text().startswith("<svg")
    assert "compliant" in (tmp_path / "summary.md").read_text()
    assert sorted(p.name for p in ws.iterdir()) == ["rdq-out"]  # nothing else written there
    assert not [line for line in done.stdout.splitlines() if line.startswith("::error")]


def test_a_failing_plugin_annotates_and_gives_exit_status_1(tmp_path: Path) -> None:
    done, outputs, _ = _run(
        tmp_path, plugin="tests.mutants.zoo:mysql_datetime_no_fsp", profile="quick",
        workers="2", args="-k 'test_timestamp_keeps_milliseconds or test_missing_id'",
        out="results")
    assert done.returncode == 0, done.stderr[-3000:]  # the script ran: the gate step exits
    assert outputs["verdict"] == "non-compliant" and outputs["exit-code"] == "1", outputs
    assert outputs["report"].endswith("/ws/results/report.json")
    errors = [line for line in done.stdout.splitlines() if line.startswith("::error ")]
    assert 1 <= len(errors) <= 10 and "RDQ-RT-007" in errors[0], done.stdout[-3000:]


@pytest.mark.parametrize(("inputs", "message"), [
    ({"plugin": ""}, "input plugin='' is empty"),
    ({"plugin": "memory", "workers": "two"}, "input workers='two' is not a number"),
])
def test_a_wrong_input_is_one_line(tmp_path: Path, inputs: dict[str, str],
                                   message: str) -> None:
    done, outputs, _ = _run(tmp_path, **inputs)
    assert done.returncode == 2 and outputs == {}
    assert done.stderr.startswith(f"rdq-compliance action: {message}")
    assert len(done.stderr.splitlines()) == 1


@pytest.mark.parametrize(("value", "expected"), [
    ("cache/examples", "{ws}/cache/examples"),
    ("redis://127.0.0.1:6379/0?prefix=x:", "redis://127.0.0.1:6379/0?prefix=x:"),
    ("github:octo/widgets", "github:octo/widgets"),
])
def test_the_example_db_input(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, value: str,
                              expected: str) -> None:
    """A directory is the workspace's (the kit runs in an empty folder); a database
    address is passed as given."""
    from rdq_compliance._action import build_command

    monkeypatch.setenv("INPUT_PLUGIN", "memory")
    monkeypatch.setenv("INPUT_EXAMPLE_DB", value)
    cmd = build_command(tmp_path, tmp_path / "out")
    assert f"--rdq-example-db={expected.format(ws=tmp_path)}" in cmd
