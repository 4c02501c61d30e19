"""The script of the repository's GitHub Action (``action.yml``): one kit run in CI.

``python -m rdq_compliance._action`` reads the action's inputs from ``INPUT_*`` variables
(set by ``action.yml``), runs the kit from an empty folder with the report, badge and
step summary under ``INPUT_OUT`` (default ``rdq-out`` in ``GITHUB_WORKSPACE``), and writes
to ``GITHUB_OUTPUT``: ``verdict``, ``exit-code``, ``report``, ``badge``. It always exits 0
when the kit ran, so that the action can upload the files first; the action's last step
exits with ``exit-code`` (pytest's status, which follows the verdict). Exit 2: an input
is wrong (said in one line).

Inputs: ``plugin`` (required; several separated by newlines), ``options`` (KEY=VALUE per
line), ``profile``, ``seed``, ``workers`` (pytest-xdist ``-n``; 0 for none),
``known-failures``, ``baseline``, ``upgrade-save``, ``upgrade-check``, ``shard``,
``example-db`` (a directory, relative to the workspace, or a ``redis://`` or ``github:``
database), ``out``, ``args`` (more pytest arguments, shell-quoted). Paths are relative to
the workspace.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

__all__ = ["build_command", "main"]

_PATHS = {"known-failures": "--rdq-known-failures", "baseline": "--rdq-baseline",
          "upgrade-save": "--rdq-upgrade-save", "upgrade-check": "--rdq-upgrade-check"}


def _input(name: str) -> str:
    return os.environ.get(f"INPUT_{name.upper().replace('-', '_')}", "").strip()


def _lines(name: str) -> list[str]:
    return [line.strip() for line in _input(name).splitlines() if line.strip()]


def build_command(workspace: Path, out: Path) -> list[str]:
    """The pytest command line of the run; ValueError naming a wrong input."""
    plugins = _lines("plugin")
    if not plugins:
        raise ValueError("input plugin='' is empty; expected the name given to --rdq-plugin")
    cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider"]
    workers = _input("workers") or "2"
    if not workers.isdigit():
        raise ValueError(f"input workers={workers!r} is not a number; expected e.g. 2 or 0")
    if int(workers) > 0:
        cmd += ["-n", workers]
    cmd += [f"--rdq-plugin={p}" for p in plugins]
    cmd += [f"--rdq-option={o}" for o in _lines("options")]
    for name in ("profile", "seed", "shard"):
        if _input(name):
            cmd.append(f"--rdq-{name}={_input(name)}")
    # every path as --opt=VALUE: never taken by pytest for a path to test
    for name, flag in _PATHS.items():
        if _input(name):
            cmd.append(f"{flag}={workspace / _input(name)}")
    db = _input("example-db")
    if db:  # a directory is taken from the workspace (the kit runs in an empty folder)
        remote = db.startswith("github:") or db.split("://", 1)[0] in ("redis", "rediss", "unix")
        cmd.append(f"--rdq-example-db={db if remote else workspace / db}")
    cmd += [f"--rdq-report={out / 'report.json'}", f"--rdq-badge={out / 'badge.svg'}",
            f"--rdq-failures-dir={out / 'failures'}"]
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary:
        cmd.append(f"--rdq-summary={summary}")
    return cmd + shlex.split(_input("args"))


def main() -> int:
    workspace = Path(os.environ.get("GITHUB_WORKSPACE") or os.getcwd())
    out = workspace / (_input("out") or "rdq-out")
    try:
        cmd = build_command(workspace, out)
    except ValueError as e:
        print(f"rdq-compliance action: {e}", file=sys.stderr)
        return 2
    out.mkdir(parents=True, exist_ok=True)
    print("rdq-compliance action: " + shlex.join(cmd[2:]), flush=True)
    with tempfile.TemporaryDirectory(prefix="rdq-run-") as empty:  # as a plugin author would
        code = subprocess.call(cmd, cwd=empty)
    report = out / "report.json"
    try:
        verdict = str(json.loads(report.read_text(encoding="utf-8"))["verdict"])
    except (OSError, ValueError, KeyError):
        verdict = "none"  # no report: the run did not start (a usage error says why)
    outputs = {"verdict": verdict, "exit-code": str(code or (1 if verdict == "none" else 0)),
               "report": str(report), "badge": str(out / "badge.svg")}
    github_output = os.environ.get("GITHUB_OUTPUT")
    if github_output:
        with open(github_output, "a", encoding="utf-8") as f:
            f.writelines(f"{k}={v}\n" for k, v in outputs.items())
    print(f"rdq-compliance action: verdict {verdict}, exit status {outputs['exit-code']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
