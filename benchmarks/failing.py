"""What a failing run costs (issue 21 §3): a one-defect plugin against its compliant twin.

    python -m benchmarks.failing ratio                # full ci runs, A B A B, 3 pairs each
    python -m benchmarks.failing ratio --repeat 1 --pair drop_unknown_error:ok_base
    python -m benchmarks.failing first-failure        # -x on every one-defect mutant of the zoo
    python -m benchmarks.failing first-failure --only mysql_datetime_no_fsp --jsonl out.jsonl

``ratio``: a full kit run (ci profile, no ``-x``) of a mutant with one defect and of a
compliant plugin of the same store, interleaved (mutant, twin, mutant, twin, ...) so that
a change in the machine's load hits both alike; prints each pair's walls, the medians and
the ratio failing / compliant (target: at most 2).

``first-failure``: ``-x --rdq-profile ci`` on each mutant (``Kind.MUTANT``) of
``tests/mutants/zoo.py``, one run each: the wall time to exit, the first failing test, the
median and the worst (targets: median at most 3 s, none over 10 s). ``--jsonl`` appends one
JSON object per run, to compare two code states mutant by mutant.

Numbers only: nothing here fails because something is slow. Every run is a ``pytest``
subprocess in an empty temporary directory (``benchmarks.run.run_kit``).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a file: the repository root for tests.mutants
    sys.path.insert(0, str(ROOT))

from benchmarks.run import fmt_s, log, median, run_kit  # noqa: E402

__all__ = ["PAIRS", "first_failing_test", "main", "ratio_rows"]

TARGET_RATIO = 2.0
TARGET_X_MEDIAN = 3.0
TARGET_X_MAX = 10.0

PAIRS: tuple[tuple[str, str], ...] = (
    # The zoo's JSON-document store dropping unknown fields of `error` (the issue's
    # PostgreSQL plugin, in memory) against the same store without the defect.
    ("tests.mutants.zoo:drop_unknown_error", "tests.mutants.zoo:ok_base"),
    # Timestamps cut to the second (a MySQL DATETIME column) against the same store.
    ("tests.mutants.zoo:mysql_datetime_no_fsp", "tests.mutants.zoo:ok_base"),
)


def _label(plugin: str) -> str:
    return plugin.rpartition(":")[2]


def first_failing_test(out: str) -> str:
    """The first ``FAILED`` test id of a ``-rf`` summary, without the plugin label."""
    failed = re.findall(r"^(?:FAILED|ERROR) (\S+)", out, re.M)
    if not failed:
        return ""
    first = failed[0].split("::", 1)[-1]
    return re.sub(r"\[tests\.mutants\.zoo:[^\]-]+-?", "[", first).replace("[]", "")


def ratio_rows(pairs: Sequence[tuple[str, str]], repeat: int, profile: str) -> list[str]:
    """Markdown rows: one per pair, medians of ``repeat`` interleaved runs each; the ratio
    of wall times (the target) and of CPU times (steadier on a loaded machine)."""
    rows = [f"| failing plugin | compliant twin | runs' wall (failing / compliant) | failing "
            f"(median wall, CPU) | compliant (median wall, CPU) | ratio wall | ratio CPU | "
            f"target ≤ {TARGET_RATIO:g}× |",
            "|---|---|---|---|---|---|---|---|"]
    for bad, good in pairs:
        walls: dict[str, list[float]] = {bad: [], good: []}
        cpus: dict[str, list[float]] = {bad: [], good: []}
        summaries: dict[str, str] = {}
        for i in range(repeat):
            for plugin in (bad, good):
                log(f"ratio: {_label(plugin)} run {i + 1}/{repeat}")
                run = run_kit([f"--rdq-plugin={plugin}", "-q", f"--rdq-profile={profile}"])
                walls[plugin].append(run.wall)
                cpus[plugin].append(run.cpu)
                summaries[plugin] = run.summary
                log(f"  {run.wall:.1f} s (CPU {run.cpu:.1f} s, load {run.load:.1f}), "
                    f"exit {run.rc}: {summaries[plugin]}")
        b, g = median(walls[bad]), median(walls[good])
        bc, gc = median(cpus[bad]), median(cpus[good])
        ratio = b / g
        runs = (", ".join(f"{w:.1f}" for w in walls[bad]) + " / "
                + ", ".join(f"{w:.1f}" for w in walls[good]))
        ok = "met" if ratio <= TARGET_RATIO else "**missed**"
        rows.append(f"| `{_label(bad)}` ({summaries[bad]}) | `{_label(good)}` | {runs} | "
                    f"{fmt_s(b)}, {fmt_s(bc)} | {fmt_s(g)}, {fmt_s(gc)} | {ratio:.2f}× | "
                    f"{bc / gc:.2f}× | {ok} |")
    return rows


def _mutants(only: Sequence[str]) -> list[tuple[str, tuple[str, ...]]]:
    """(id, the requirements it declares) of every one-defect mutant of the zoo."""
    from tests.mutants import zoo
    from tests.mutants._entries import Kind

    found = [(e.id, tuple(e.catches)) for e in zoo.ENTRIES if e.kind is Kind.MUTANT]
    if only:
        unknown = sorted(set(only) - {i for i, _ in found})
        if unknown:
            raise SystemExit(f"--only: no mutant {unknown!r} in tests/mutants/zoo.py")
        found = [(i, c) for i, c in found if i in only]
    return found


def _first_requirement(work: Path, first_nodeid: str) -> tuple[str, str]:
    """The requirement of the first failed test and the first cause's, from the run's
    report (``-`` when there is none)."""
    try:
        report = json.loads((work / "report.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return "-", "-"
    owner: dict[str, str] = {}
    cause = "-"
    for plugin in report.get("plugins", []):
        for r in plugin.get("requirements", []):
            for t in r.get("tests", []):
                owner[t["nodeid"]] = r["id"]
        if plugin.get("causes"):
            cause = plugin["causes"][0]["requirement"]
    return owner.get(first_nodeid, "-"), cause


def first_failure_rows(only: Sequence[str], profile: str, jsonl: Path | None) -> list[str]:
    """Markdown: every mutant's ``-x`` wall and CPU, the requirement of its first failed
    test (does the mutant declare it?), then the median, the worst and those over the
    limit."""
    import shutil
    import tempfile

    results: list[dict[str, object]] = []
    for n, (mutant, catches) in enumerate(_mutants(only), 1):
        work = Path(tempfile.mkdtemp(prefix="rdq-bench-x-"))
        run = run_kit([f"--rdq-plugin=tests.mutants.zoo:{mutant}", "-x", "-q", "-rfE",
                       f"--rdq-profile={profile}", "--rdq-report=report.json"],
                      timeout=300, cwd=work)
        found = re.search(r"^(?:FAILED|ERROR) (\S+)", run.out, re.M)
        nodeid = found.group(1) if found else ""
        first_req, cause = _first_requirement(work, nodeid)
        shutil.rmtree(work, ignore_errors=True)
        first = first_failing_test(run.out) or f"(none: {run.summary})"
        row = {"mutant": mutant, "wall": round(run.wall, 2), "cpu": round(run.cpu, 2),
               "rc": run.rc, "first": first, "first_requirement": first_req,
               "first_cause": cause, "declared": list(catches),
               "right": first_req in catches, "load": run.load}
        log(f"first-failure {n}: {mutant}: {run.wall:.1f} s (CPU {run.cpu:.1f} s, load "
            f"{run.load:.1f}), {first_req} {'ok' if row['right'] else 'NOT declared'}: {first}")
        results.append(row)
        if jsonl is not None:
            with jsonl.open("a", encoding="utf-8") as f:
                f.write(json.dumps(row) + "\n")
    walls = [float(r["wall"]) for r in results]  # type: ignore[arg-type]
    cpus = [float(r["cpu"]) for r in results]  # type: ignore[arg-type]
    loads = [float(r["load"]) for r in results]  # type: ignore[arg-type]
    slow = [r for r in results if float(r["wall"]) > TARGET_X_MAX]  # type: ignore[arg-type]
    wrong = [r for r in results if not r["right"]]
    rows = [f"{len(results)} mutants, `-x --rdq-profile={profile}`, one run each: median "
            f"{fmt_s(median(walls))} wall (target ≤ {TARGET_X_MEDIAN:g} s), "
            f"{fmt_s(median(cpus))} CPU; worst {fmt_s(max(walls, default=float('nan')))}; "
            f"over {TARGET_X_MAX:g} s: {len(slow)}; load average {min(loads, default=0):.1f}"
            f"–{max(loads, default=0):.1f}",
            f"first failed test of a declared requirement: {len(results) - len(wrong)} of "
            f"{len(results)}; first cause a declared requirement: "
            f"{sum(r['first_cause'] in r['declared'] for r in results)} of {len(results)}",  # type: ignore[operator]
            "", "| mutant | wall | CPU | first failing test | its requirement | first cause | "
            "declared |",
            "|---|---|---|---|---|---|---|"]
    shown = slow + [r for r in wrong if r not in slow]
    shown = shown or sorted(results, key=lambda r: -float(r["wall"]))[:10]  # type: ignore[arg-type]
    for r in shown:
        rows.append(f"| `{r['mutant']}` | {fmt_s(float(r['wall']))} | "  # type: ignore[arg-type]
                    f"{fmt_s(float(r['cpu']))} | `{str(r['first'])[:90]}` | "  # type: ignore[arg-type]
                    f"{r['first_requirement']} | {r['first_cause']} | "
                    f"{', '.join(r['declared'])} |")  # type: ignore[arg-type]
    passed = [str(r["mutant"]) for r in results if r["rc"] == 0]
    if passed:
        rows.append(f"\nNot caught by `-x` (exit 0): {', '.join(passed)}")
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.failing", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="what", required=True)
    r = sub.add_parser("ratio", help="full failing run against its compliant twin")
    r.add_argument("--repeat", type=int, default=3, help="pairs of runs per pair (default 3)")
    r.add_argument("--pair", action="append", default=[], metavar="MUTANT:TWIN",
                   help="zoo ids, e.g. drop_unknown_error:ok_base (repeatable)")
    r.add_argument("--profile", default="ci")
    f = sub.add_parser("first-failure", help="-x on every one-defect mutant of the zoo")
    f.add_argument("--only", action="append", default=[], metavar="ID")
    f.add_argument("--jsonl", type=Path, default=None)
    f.add_argument("--profile", default="ci")
    args = ap.parse_args(argv)
    log(f"load average {os.getloadavg()[0]:.2f}, {os.cpu_count()} CPUs")
    if args.what == "ratio":
        pairs = list(PAIRS)
        if args.pair:
            pairs = []
            for p in args.pair:
                bad, sep, good = p.partition(":")
                if not sep or not bad or not good:
                    ap.error(f"--pair={p!r}: expected MUTANT:TWIN (zoo ids)")
                pairs.append((f"tests.mutants.zoo:{bad}", f"tests.mutants.zoo:{good}"))
        rows = ratio_rows(pairs, max(args.repeat, 1), args.profile)
    else:
        rows = first_failure_rows(args.only, args.profile, args.jsonl)
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
