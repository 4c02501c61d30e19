"""How reliably the concurrency suite (RDQ-CC-001..004, C18) catches and clears.

    .venv/bin/python benchmarks/concurrency.py                 # 20 runs, ci profile
    .venv/bin/python benchmarks/concurrency.py --runs 5 --profile quick
    .venv/bin/python benchmarks/concurrency.py --only memory --only redis
    .venv/bin/python benchmarks/concurrency.py --no-servers --pytest-arg=--rdq-pin-threads=always

Each run is one kit run (a pytest subprocess in an empty directory, like a plugin's CI
job) of the concurrency suite against every plugin at once, with ``--rdq-seed`` = the
run's index, so every run draws another plan. A mutant counts as caught in a run when
every requirement it declares in the zoo failed; a correct plugin (zoo variant or
example) counts as clean when all four requirements passed. Server-backed examples
(PostgreSQL, MariaDB, Redis) are included when they declare ``concurrent`` and their
server answers. The machine's load average is printed with the results: the point is
"never fails a correct plugin" on a loaded 2-core box.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.mutants._entries import Kind  # noqa: E402
from tests.mutants.zoo import ENTRIES  # noqa: E402

CC = [f"RDQ-CC-00{i}" for i in range(1, 5)]
NODE = shutil.which("node")
SERVERS = ("postgres", "mariadb", "redis")


def _entries() -> list[tuple[str, str, tuple[str, ...], list[str]]]:
    """(label, kind, catches, extra args) of every plugin measured."""
    out: list[tuple[str, str, tuple[str, ...], list[str]]] = []
    for e in ENTRIES:
        if any(c.startswith("RDQ-CC-") for c in e.catches) or (
            e.kind is Kind.CORRECT and ("concurrent" in e.defect or "C18" in e.defect)
        ):
            out.append((e.label, e.kind.value, e.catches, []))
    out.append(("memory", "example", (), []))
    out.append(("sqlite", "example", (), ["--rdq-option", "sqlite.path=sqlite.db"]))
    for server in SERVERS:
        out.append((server, "example", (), []))
    if NODE is not None:
        out.append(("stdio", "example", (),
                    ["--rdq-testee", f"{NODE} {ROOT / 'plugins_example/node/testee.js'}"]))
    return out


def one_run(seed: int, profile: str, entries: list[tuple[str, str, tuple[str, ...], list[str]]],
            extra: Sequence[str] = ()) -> tuple[float, dict[str, dict[str, str]], dict[str, str]]:
    """Wall seconds, label -> requirement -> status, label -> capabilities declared."""
    args = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q",
            f"--rdq-profile={profile}", f"--rdq-seed={seed}", "--rdq-report", "report.json",
            "-k", "concurrency", *extra]
    for label, _kind, _catches, extra in entries:
        args += [f"--rdq-plugin={label}", *extra]
    with tempfile.TemporaryDirectory(prefix="rdq-bench-cc-") as work:
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        start = time.monotonic()
        proc = subprocess.run(args, cwd=work, env=env, capture_output=True, text=True,
                              timeout=1800)
        wall = time.monotonic() - start
        path = Path(work) / "report.json"
        if not path.exists():
            raise SystemExit(f"run {seed}: no report (exit {proc.returncode}):\n"
                             f"{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
        report = json.loads(path.read_text())
        if os.environ.get("RDQ_BENCH_KEEP"):
            keep = ROOT / f".rdq-bench-cc-{seed}.txt"
            keep.write_text(proc.stdout)
    statuses = {p["label"]: {r["id"]: r["status"] for r in p["requirements"]}
                for p in report["plugins"]}
    caps = {p["label"]: ",".join(sorted(p.get("capabilities", []))) for p in report["plugins"]}
    return wall, statuses, caps


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--profile", default="ci", choices=("quick", "ci", "thorough"))
    ap.add_argument("--only", action="append", default=[], help="a plugin label")
    ap.add_argument("--no-servers", action="store_true",
                    help="leave out the PostgreSQL, MariaDB and Redis examples")
    ap.add_argument("--pytest-arg", action="append", default=[], metavar="ARG",
                    help="passed on to every kit run, e.g. --pytest-arg=--rdq-pin-threads=always")
    args = ap.parse_args()
    entries = [e for e in _entries() if (not args.only or e[0] in args.only)
               and not (args.no_servers and e[0] in SERVERS)]
    caught: dict[str, int] = {}
    clean: dict[str, int] = {}
    applicable: dict[str, int] = {}
    failures: dict[str, list[str]] = {}
    walls = []
    for seed in range(args.runs):
        wall, statuses, _caps = one_run(seed, args.profile, entries, args.pytest_arg)
        walls.append(wall)
        for label, kind, catches, _extra in entries:
            st = statuses.get(label, {})
            cc = [st.get(r, "missing") for r in CC]
            if all(s == "not-applicable" for s in cc) or all(s == "skipped" for s in cc):
                continue  # does not declare concurrent, or its server is down
            applicable[label] = applicable.get(label, 0) + 1
            if kind == "mutant":
                if all(st.get(r) == "failed" for r in catches):
                    caught[label] = caught.get(label, 0) + 1
                else:
                    failures.setdefault(label, []).append(f"seed {seed}: {cc}")
            elif all(s == "passed" for s in cc):
                clean[label] = clean.get(label, 0) + 1
            else:
                failures.setdefault(label, []).append(f"seed {seed}: {cc}")
        print(f"run {seed + 1}/{args.runs}: {wall:.1f} s", file=sys.stderr, flush=True)
    load = os.getloadavg()
    print(f"## Concurrency suite: {args.runs} runs, profile {args.profile}, "
          f"{' '.join(args.pytest_arg) or 'no extra arguments'}, "
          f"load average {load[0]:.2f} / {load[1]:.2f} / {load[2]:.2f}, "
          f"{os.cpu_count()} CPUs\n")
    print(f"Wall time of one run (all plugins below, concurrency suite only): median "
          f"{sorted(walls)[len(walls) // 2]:.1f} s, max {max(walls):.1f} s\n")
    print("| plugin | kind | must fail | result |")
    print("|---|---|---|---|")
    for label, kind, catches, _extra in entries:
        n = applicable.get(label, 0)
        if n == 0:
            print(f"| `{label}` | {kind} | — | not measured (no `concurrent`, or server down) |")
            continue
        if kind == "mutant":
            result = f"caught {caught.get(label, 0)}/{n}"
        else:
            result = f"clean {clean.get(label, 0)}/{n}"
        print(f"| `{label}` | {kind} | {', '.join(catches) or '—'} | {result} |")
    for label, lines in failures.items():
        print(f"\n{label}: " + "; ".join(lines[:5]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
