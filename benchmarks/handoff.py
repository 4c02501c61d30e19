"""What one plugin call's hand-off to the guard's thread costs, free or on one CPU.

    .venv/bin/python benchmarks/handoff.py                # 5 alternated pairs, 20,000 calls each
    .venv/bin/python benchmarks/handoff.py --pairs 3 --calls 50000

Every plugin call of a kit run goes through ``testing/_runner.Runner.call``: the test's
thread hands it to the runner's thread and waits for the answer. Each measurement is a
fresh Python process timing ``calls`` calls of a function that returns at once, either
with its threads free to run on any CPU (``free``) or kept on one CPU as
``--rdq-pin-threads`` keeps them (``one CPU``); the two alternate. Linux only; needs two
CPUs to mean anything (on one CPU the two are the same).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

_CHILD = """
import os, sys, time
from rdq_compliance.testing._runner import Runner
calls, pin = int(sys.argv[1]), sys.argv[2] == "pin"
if pin:
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # the runner's thread inherits it
runner = Runner("handoff")
for _ in range(1000):  # warm-up
    runner.call(int, timeout=10)
start = time.perf_counter()
for _ in range(calls):
    runner.call(int, timeout=10)
print((time.perf_counter() - start) / calls * 1e6)
"""


def _one(calls: int, pin: bool) -> float:
    out = subprocess.run([sys.executable, "-c", _CHILD, str(calls), "pin" if pin else "free"],
                         cwd=ROOT, check=True, capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    return float(out.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--calls", type=int, default=20_000)
    args = parser.parse_args()
    if not hasattr(os, "sched_setaffinity"):
        sys.exit("handoff.py: needs os.sched_setaffinity (Linux)")
    free, pinned = [], []
    for _ in range(args.pairs):
        free.append(_one(args.calls, pin=False))
        pinned.append(_one(args.calls, pin=True))
    cpus = len(os.sched_getaffinity(0))
    print(f"Runner.call round trip, {args.calls:,} calls per process, {args.pairs} alternated "
          f"pairs, {cpus} CPUs allowed, load average {os.getloadavg()[0]:.1f}:")
    for name, values in (("free", free), ("one CPU", pinned)):
        print(f"  {name:8} median {statistics.median(values):6.1f} µs  "
              f"({', '.join(f'{v:.1f}' for v in values)})")


if __name__ == "__main__":
    main()
