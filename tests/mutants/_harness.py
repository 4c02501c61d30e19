"""Run the kit on zoo entries in a child pytest process and read what it says.

One kit run tests many entries at once (``--rdq-plugin`` repeated; every test id
carries the plugin label), so the zoo costs a few pytest start-ups, not one per
entry. Each run is bounded by a wall-clock timeout; on expiry the whole process
group (kit and testees) is killed and the run counts as hung.

"No traceback from the kit itself" is defined by :func:`kit_traceback_problems`.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import rdq_compliance

__all__ = ["KitResult", "first_failed", "kit_traceback_problems", "run_kit"]

ROOT = Path(__file__).resolve().parents[2]
KIT_DIR = Path(rdq_compliance.__file__).resolve().parent
ASSERTION_SITE = KIT_DIR / "suites"
PLUGIN_DIR = Path(__file__).resolve().parent
FOCUS_ENV = "RDQ_ZOO_FOCUS"


@dataclass
class KitResult:
    args: list[str]
    returncode: int | None
    """None when the run was killed at the wall-clock timeout."""
    output: str
    report: dict[str, Any] | None
    seconds: float
    cwd: Path
    problems: list[str] = field(default_factory=list)
    """Why the report could not be read, if it could not."""

    def plugin(self, label: str) -> dict[str, Any]:
        assert self.report is not None, self.describe()
        for p in self.report["plugins"]:
            if p["label"] == label:
                return p  # type: ignore[no-any-return]
        raise AssertionError(f"plugin {label!r} is not in the report\n{self.describe()}")

    def verdict(self, label: str) -> str:
        return str(self.plugin(label)["verdict"])

    def statuses(self, label: str) -> dict[str, str]:
        return {r["id"]: r["status"] for r in self.plugin(label)["requirements"]}

    def failed(self, label: str) -> set[str]:
        return {rid for rid, s in self.statuses(label).items() if s == "failed"}

    def messages(self, label: str) -> list[str]:
        out: list[str] = []
        for r in self.plugin(label)["requirements"]:
            if r["first_failure"]:
                out.append(r["first_failure"])
            out.extend(t["message"] for t in r["tests"] if t.get("message"))
        return out

    def kit_tracebacks(self, *labels: str) -> list[str]:
        return kit_traceback_problems(self.output, base=self.cwd, only_sections=labels)

    def describe(self, tail: int = 60) -> str:
        lines = self.output.splitlines()
        shown = "\n".join(lines[-tail:])
        return (
            f"kit run: {' '.join(self.args)}\nexit status {self.returncode} after "
            f"{self.seconds:.1f} s; {'; '.join(self.problems) or 'report read'}\n"
            f"--- last {min(tail, len(lines))} of {len(lines)} output lines ---\n{shown}"
        )


def _child_env() -> dict[str, str]:
    # The child is a fresh kit run: nothing of this pytest process (xdist worker ids,
    # addopts, a testee set for the outer run) may leak into it.
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYTEST_", "RDQ_TESTEE", "RDQ_ZOO_", "HYPOTHESIS_"))}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def run_kit(plugin_args: Sequence[str], *, extra: Sequence[str] = (), timeout: float = 900,
            profile: str = "quick", focus: Mapping[str, Sequence[str]] | None = None,
            ) -> KitResult:
    """Run ``pytest --rdq-plugin ...`` in an empty directory and read its report.

    ``focus`` maps plugin labels to the requirement ids their tests are limited to
    (see ``_focus.py``); labels not in it run every kit test.
    """
    work = Path(tempfile.mkdtemp(prefix="rdq-zoo-run-"))
    report_path = work / "report.json"
    args = [
        sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q",
        f"--rdq-profile={profile}", f"--rdq-report={report_path}",
        f"--rdq-failures-dir={work / 'failures'}", *plugin_args, *extra,
    ]
    env = _child_env()
    if focus:
        # A focused run is partial by design: incomplete must not fail it (non-compliant
        # still does, exit status 1).
        args[3:3] = ["-p", "tests.mutants._focus", "--rdq-allow-incomplete"]
        env[FOCUS_ENV] = json.dumps({k: list(v) for k, v in focus.items()})
    start = time.monotonic()
    proc = subprocess.Popen(args, cwd=work, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, start_new_session=True)
    try:
        raw, _ = proc.communicate(timeout=timeout)
        code: int | None = proc.returncode
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)  # the kit and every testee it started
        raw, _ = proc.communicate()
        code = None
    result = KitResult(args, code, raw.decode("utf-8", "replace"), None,
                       time.monotonic() - start, work)
    if code is None:
        result.problems.append(f"killed after the {timeout:.0f} s wall-clock timeout")
    try:
        result.report = json.loads(report_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        result.problems.append(f"no readable report at {report_path}: {exc}")
    if os.environ.get("RDQ_ZOO_KEEP") != "1":  # RDQ_ZOO_KEEP=1 keeps report and failures
        shutil.rmtree(work, ignore_errors=True)
    return result


# -- "no traceback from the kit itself" --------------------------------------------------

_SECTION = re.compile(r"^_+ (.*?[A-Za-z0-9].*?) _+$")  # pytest: "_ name _" at the least
# Python tracebacks also appear inside pytest's "E   " failure message lines.
_CHAIN = re.compile(
    r"^E?\s*(Traceback \(most recent call last\):|During handling of the above exception"
    r"|The above exception was the direct cause|[+|]?\s*Exception Group Traceback)"
)
_PY_FRAME = re.compile(r'^E?[\s|+]*File "([^"]+)", line \d+')
_PYTEST_FRAME = re.compile(r"^\s*([^\s\"'][^:\"']*\.py):\d+:")
_ALWAYS_BAD = ("INTERNALERROR", "Exception in thread", "Exception ignored in",
               "PytestUnhandledThreadExceptionWarning", "PytestUnraisableExceptionWarning")


def _where(path_text: str, base: Path) -> str:
    """'assertion' (rdq_compliance/suites), 'kit' (the rest of rdq_compliance), 'plugin'
    (tests/mutants: the code under test) or 'other' (stdlib, pytest, hypothesis...)."""
    path = Path(path_text)
    if not path.is_absolute():
        path = base / path
    path = Path(os.path.normpath(path))
    for root, kind in ((ASSERTION_SITE, "assertion"), (KIT_DIR, "kit"), (PLUGIN_DIR, "plugin")):
        if path == root or root in path.parents:
            return kind
    return "other"


def kit_traceback_problems(output: str, *, base: Path | None = None,
                           only_sections: Iterable[str] = ()) -> list[str]:
    """Lines of a kit run's output that show the kit's own traceback.

    The definition, applied to every traceback the run prints (pytest's rendering
    of each failure, and any Python "Traceback (most recent call last)" block inside
    a message):

    - a frame in ``rdq_compliance/suites/`` is the assertion site: allowed;
    - a frame in the plugin under test (``tests/mutants/``) is allowed, and so is
      every frame it leads to (a plugin calling the kit's public API shows those
      frames as part of *its* traceback);
    - any other frame in ``rdq_compliance/`` reached before the plugin's code is the
      kit's own machinery (guard, bridge, codec, pytest glue): a problem;
    - ``INTERNALERROR``, "Exception in thread", "Exception ignored in" and pytest's
      unhandled-thread/unraisable warnings are problems wherever they appear.

    ``only_sections``: check only failure sections whose pytest header contains one
    of these strings (e.g. a plugin label); the always-bad lines are checked everywhere.
    """
    base = base or Path.cwd()
    wanted = tuple(only_sections)
    problems: list[str] = []
    section = ""
    in_plugin = False
    for n, line in enumerate(output.splitlines(), 1):
        if any(bad in line for bad in _ALWAYS_BAD):
            problems.append(f"line {n}: {line.strip()[:200]}")
            continue
        m = _SECTION.match(line)
        if m:
            section, in_plugin = m.group(1), False
            continue
        if _CHAIN.match(line):
            in_plugin = False
            continue
        if wanted and not any(w in section for w in wanted):
            continue
        frame = _PY_FRAME.match(line) or _PYTEST_FRAME.match(line)
        if frame is None:
            continue
        kind = _where(frame.group(1), base)
        if kind == "plugin":
            in_plugin = True
        elif kind == "kit" and not in_plugin:
            problems.append(f"line {n} [{section or 'no section'}]: {line.strip()[:200]}")
    return problems


def first_failed(result: KitResult) -> str:
    """The node id of the first ``FAILED``/``ERROR`` line of the short test summary
    (pytest lists failures in the order they happened)."""
    found = re.search(r"^(?:FAILED|ERROR) (\S+)", result.output, re.M)
    assert found is not None, result.describe()
    return found.group(1)
