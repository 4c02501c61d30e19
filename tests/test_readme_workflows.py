"""The README's GitHub workflows, run as written (issue 23).

Each ```yaml block of README.md that defines jobs is a workflow. Its ``run:`` steps are
executed by bash as GitHub's runner does (``bash --noprofile --norc -eo pipefail``) in a
scratch ``GITHUB_WORKSPACE`` holding an example plugin, with a fresh virtualenv (made once
for this module) first on ``PATH``; the ``uses:`` steps are done by this module (checkouts,
setup-python, upload-artifact), and an action it does not know fails the test, so a new
step in the README cannot go untested. Only the plugin's name (``mine``) and the kit's
repository (``OWNER/rdq-compliance``) are substituted. ``PYTEST_ADDOPTS`` selects the quick
profile: what is tested is the workflow, not the plugin. The pip installs need the package
index (as on GitHub); the module costs about two minutes.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"

pytestmark = [pytest.mark.slow_ci, pytest.mark.xdist_group("readme_workflows")]


def readme_workflows() -> dict[str, dict[str, Any]]:
    """The workflows of README.md by the file name in their first comment line."""
    found = {}
    for block in re.findall(r"^```yaml\n(.*?)^```", README.read_text(encoding="utf-8"),
                            re.S | re.M):
        name = block.splitlines()[0].removeprefix("# ").strip()
        workflow = yaml.safe_load(block)
        if isinstance(workflow, dict) and "jobs" in workflow:
            found[name] = workflow
    return found


def test_the_readme_has_the_two_workflows() -> None:
    assert sorted(readme_workflows()) == [".github/workflows/rdq-compliance.yml",
                                          ".github/workflows/rdq-upgrade.yml"]


@pytest.fixture(scope="module")
def fresh_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A virtualenv with nothing but pip: the runner's setup-python."""
    path = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", str(path)], check=True)
    return path


def _git(ws: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=ci", "-c", "user.email=ci@example.invalid",
                    "-c", "init.defaultBranch=main", *args], cwd=ws, check=True,
                   capture_output=True)


class Runner:
    """Runs one job of a README workflow the way GitHub's runner would."""

    def __init__(self, scratch: Path, venv: Path, plugin: str) -> None:
        self.ws = scratch / "ws"
        self.plugin = plugin
        self.summary = scratch / "_temp" / "step_summary"
        self.summary.parent.mkdir(parents=True)
        self.summary.touch()  # the runner creates it before the step
        tmp = scratch / "tmp"
        tmp.mkdir()
        self.env = {
            k: v for k, v in os.environ.items()
            if not k.startswith(("PYTEST_", "PYTHON", "VIRTUAL_ENV", "RDQ_", "GITHUB_"))
        }
        self.env.update(
            PATH=f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}", GITHUB_ACTIONS="true",
            GITHUB_WORKSPACE=str(self.ws), GITHUB_STEP_SUMMARY=str(self.summary),
            RUNNER_TEMP=str(scratch / "_temp"), TMPDIR=str(tmp),
            PYTEST_ADDOPTS="--rdq-profile=quick", PIP_DISABLE_PIP_VERSION_CHECK="1",
        )
        self.outputs: list[str] = []
        self.uploaded: list[Path] = []

    def uses(self, action: str, with_: dict[str, Any]) -> None:
        if action == "actions/checkout@v4" and "repository" not in with_:
            assert self.ws.is_dir()  # the plugin's clone: made by the test
        elif action == "actions/checkout@v4":
            assert with_["repository"] == "OWNER/rdq-compliance", with_
            (self.ws / with_["path"]).symlink_to(REPO, target_is_directory=True)
        elif action == "actions/setup-python@v5":
            assert str(with_["python-version"]) == f"{sys.version_info[0]}.{sys.version_info[1]}"
        elif action == "actions/upload-artifact@v4":
            path = self.ws / with_["path"]
            assert path.is_dir() and any(path.iterdir()), f"nothing to upload in {path}"
            self.uploaded.append(path)
        else:
            pytest.fail(f"the README's workflow uses action={action!r}, which this test does "
                        "not emulate: add it to Runner.uses")

    def run(self, script: str) -> None:
        assert "--rdq-plugin=mine" in script or "--rdq-plugin" not in script, script
        script = script.replace("--rdq-plugin=mine", f"--rdq-plugin={self.plugin}")
        done = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script],
                              cwd=self.ws, env=self.env, capture_output=True, text=True,
                              timeout=1200)
        self.outputs.append(done.stdout + done.stderr)
        assert done.returncode == 0, f"step failed ({done.returncode}):\n{script}\n" + (
            done.stdout[-6000:] + done.stderr[-4000:])

    def job(self, workflow: dict[str, Any]) -> None:
        (job,) = workflow["jobs"].values()
        for step in job["steps"]:
            if "uses" in step:
                self.uses(step["uses"], step.get("with", {}))
            else:
                self.run(step["run"])


def _copy_plugin(name: str, ws: Path) -> None:
    shutil.copytree(REPO / "plugins_example" / name, ws,
                    ignore=shutil.ignore_patterns("__pycache__", "*.egg-info", "build"))


def _report(runner: Runner) -> dict[str, Any]:
    report: dict[str, Any] = json.loads((runner.ws / "out/report.json").read_text())
    return report


def test_gating_workflow_runs_as_written(tmp_path: Path, fresh_venv: Path) -> None:
    runner = Runner(tmp_path, fresh_venv, plugin="memory")
    _copy_plugin("memory", runner.ws)
    (runner.ws / "known-failures.txt").write_text("# the plugin fails nothing\n")
    runner.job(readme_workflows()[".github/workflows/rdq-compliance.yml"])
    report = _report(runner)
    assert report["verdict"] == "compliant"
    assert report["profile"] == "quick" and report["plugins"][0]["name"] == "memory"
    assert (runner.ws / "out/badge.svg").read_text().startswith("<svg")
    assert "compliant" in runner.summary.read_text()
    assert runner.uploaded == [runner.ws / "out"]
    # the path options are written so that pytest never takes one for a path to test
    assert not any("rdq: pytest took the value" in out for out in runner.outputs)


def test_upgrade_workflow_runs_as_written(tmp_path: Path, fresh_venv: Path) -> None:
    runner = Runner(tmp_path, fresh_venv, plugin="sqlite")
    _copy_plugin("sqlite", runner.ws)
    _git(runner.ws, "init", "-q")
    _git(runner.ws, "add", "-A")
    _git(runner.ws, "commit", "-qm", "release 1")
    _git(runner.ws, "tag", "v1.0.0")
    (runner.ws / "CHANGES").write_text("after release 1\n")
    _git(runner.ws, "add", "-A")
    _git(runner.ws, "commit", "-qm", "work since")
    runner.job(readme_workflows()[".github/workflows/rdq-upgrade.yml"])
    report = _report(runner)
    assert report["verdict"] == "compliant"
    assert report["upgraded_from"], report.get("upgraded_from")
    statuses = {r["id"]: r["status"] for r in report["plugins"][0]["requirements"]}
    assert statuses["RDQ-UP-001"] == "passed", statuses
    assert runner.uploaded == [runner.ws / "out"]
