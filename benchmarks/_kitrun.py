"""One kit process, as a plugin's CI runs it, and the small helpers every benchmark uses.

Every kit run is a ``pytest`` subprocess in an empty temporary directory; its wall time,
CPU time (user + system, children included) and peak RSS come from ``os.wait4``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
PROXY = "benchmarks._timing:proxy"
TESTEE = f"node {ROOT / 'plugins_example' / 'node' / 'testee.js'}"

# -- running one kit process -----------------------------------------------------------


@dataclass
class Run:
    wall: float
    cpu: float
    rss_mb: float
    rc: int
    out: str
    cwd: Path
    load: float  # 1-minute load average when the run started
    probe: dict[str, Any] = field(default_factory=dict)

    @property
    def summary(self) -> str:
        lines = [ln for ln in self.out.splitlines() if re.search(r"\d+ (passed|failed)", ln)]
        return lines[-1].strip("= ") if lines else f"exit {self.rc}"


def _env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ)
    # The repository root on the path: benchmarks._timing/_probe and tests.mutants.
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env.pop("PYTEST_ADDOPTS", None)
    env.pop("PYTEST_XDIST_AUTO_NUM_WORKERS", None)
    # Warm by default: bytecode caches are written once and reused, as after a
    # pip install or any earlier run. run_kit(cold=True) measures without them.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.pop("PYTHONPYCACHEPREFIX", None)
    env.update(extra or {})
    return env


def run_kit(
    args: Sequence[str], *, probe: bool = False, cwd: Path | None = None,
    python_args: Sequence[str] = (), prefix: Sequence[str] = (), timeout: float = 900,
    cold: bool = False, python: str = PYTHON, env: dict[str, str] | None = None,
) -> Run:  # fmt: skip
    """One ``pytest`` process in an empty temp dir (or ``cwd``); returns its costs.

    ``cold``: no bytecode cache to read or write (an empty ``PYTHONPYCACHEPREFIX`` and
    ``PYTHONDONTWRITEBYTECODE``): every process compiles, and pytest assertion-rewrites,
    the kit's and Hypothesis' modules, as in a fresh virtualenv on a machine that sets
    ``PYTHONDONTWRITEBYTECODE``."""
    own = cwd is None
    work = Path(tempfile.mkdtemp(prefix="rdq-bench-")) if own else cwd
    assert work is not None
    extra: dict[str, str] = dict(env or {})
    if cold:
        extra["PYTHONDONTWRITEBYTECODE"] = "1"
        extra["PYTHONPYCACHEPREFIX"] = tempfile.mkdtemp(prefix="pyc-", dir=work)
    argv = [python, *python_args, "-m", "pytest", "-p", "no:cacheprovider", *args]
    if probe:
        argv[len(python_args) + 3:len(python_args) + 3] = ["-p", "benchmarks._probe"]
        extra["RDQ_BENCH_PROBE"] = str(work / "probe.json")
    argv = [*prefix, *argv]
    load = os.getloadavg()[0]
    extra["RDQ_BENCH_T0"] = repr(time.time())
    start = time.perf_counter()
    with open(work / "stdout.txt", "wb") as out:
        proc = subprocess.Popen(argv, cwd=work, env=_env(extra), stdout=out,
                                stderr=subprocess.STDOUT)
        deadline = start + timeout
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() > deadline:
                proc.kill()
                pid, status, usage = os.wait4(proc.pid, 0)
                break
            time.sleep(0.02)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    text = (work / "stdout.txt").read_text("utf-8", "replace")
    data: dict[str, Any] = {}
    if probe and (work / "probe.json").exists():
        data = json.loads((work / "probe.json").read_text("utf-8"))
    result = Run(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024,
                 proc.returncode, text, work, load, data)
    if own and not os.environ.get("RDQ_BENCH_KEEP"):
        shutil.rmtree(work, ignore_errors=True)
    return result


def median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else float("nan")


def fmt_s(seconds: float) -> str:
    return f"{seconds:.2f} s" if seconds < 100 else f"{seconds:.0f} s"


def verdict(ok: bool, how: str) -> str:
    return f"met ({how})" if ok else f"**missed** ({how})"


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)
