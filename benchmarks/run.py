"""Measure the rdq compliance kit on this machine (issue 6) and publish the numbers.

    python benchmarks/run.py                  # everything (about 5 minutes on 2 cores)
    python benchmarks/run.py --quick          # one run each, no `thorough` (about 2 minutes)
    python benchmarks/run.py --only codec     # one benchmark (repeatable)
    python benchmarks/run.py --no-write       # print the table, leave docs/ alone
    python benchmarks/run.py --only servers --write-sections   # re-measure one section in docs/

Benchmarks: profiles, split, codec, memory, first-failure, xdist, stdio, servers. Every kit run is a
``pytest`` subprocess in an empty temporary directory (what a plugin's CI sees);
its wall time, CPU time (user + system, children included) and peak RSS come
from ``os.wait4``. Medians of ``--repeat`` runs (default 3) where a run is cheap.
The Markdown table is printed and written into docs/performance.md between
the ``bench:begin`` / ``bench:end`` markers. Nothing here asserts on time: a
missed target is reported, never failed.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# In-process benchmarks import benchmarks._sampling, tests.mutants and the kit from here.
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks._codec import bench_codec  # noqa: E402
from benchmarks._kitrun import (  # noqa: E402  (re-exported: benchmarks.failing, tests)
    PROXY,
    PYTHON,
    TESTEE,
    Run,
    fmt_s,
    log,
    median,
    run_kit,
    verdict,
)
from benchmarks._servers import bench_servers  # noqa: E402
from benchmarks._xdist import bench_xdist  # noqa: E402

__all__ = ["BENCHMARKS", "Run", "fmt_s", "log", "main", "median", "run_kit", "verdict"]

DOC = ROOT / "docs" / "performance.md"
BEGIN, END = "<!-- bench:begin -->", "<!-- bench:end -->"
BENCHMARKS = ("profiles", "split", "codec", "memory", "first-failure", "xdist", "stdio",
              "servers")

# Targets of issue 6.
TARGET_WALL = {"quick": 5.0, "ci": 30.0, "thorough": 300.0}
TARGET_KIT_SHARE = 0.25
TARGET_RSS_MB = 300.0

# Mutants of tests/mutants/zoo.py (if importable): (id, the requirement that catches it).
MUTANTS = (
    ("local_tz_shift", "timestamps shifted by the local zone"),
    ("int64_as_double", "64-bit ints stored as doubles"),
    ("namespace_ignored", "namespaces not isolated"),
    ("mysql_text_64k", "TEXT column cuts near-1 MiB envelopes"),
    ("t_drop_unknown", "stdio testee dropping unknown fields"),
)


# -- 1. profiles -----------------------------------------------------------------------


def bench_profiles(repeat: int, quick: bool) -> list[str]:
    rows = ["| profile | runs | wall (median) | CPU (median) | runs' wall | result | target |",
            "|---|---|---|---|---|---|---|"]
    warm_rows = ["", "The same, warm: every run in one directory that already holds Hypothesis' "
                 "`.hypothesis/` caches (unicode tables, source constants), as on a developer "
                 "machine or a CI job that caches `.hypothesis/`:", "",
                 "| profile | runs | wall (median) | CPU (median) | peak RSS | cold peak RSS |",
                 "|---|---|---|---|---|---|"]
    for profile in ("quick", "ci", "thorough"):
        n = 1 if profile == "thorough" else repeat
        if profile == "thorough" and quick:
            rows.append("| thorough | 0 | — | — | — | skipped (--quick) | < 300 s |")
            continue
        runs = []
        for i in range(n):
            log(f"profiles: {profile} run {i + 1}/{n}")
            runs.append(run_kit(["--rdq-plugin=sqlite", "-q", f"--rdq-profile={profile}"]))
        wall = median([r.wall for r in runs])
        cpu = median([r.cpu for r in runs])
        target = TARGET_WALL[profile]
        ratio = wall / target
        # The verdict is on wall time; CPU time says what an idle machine would show.
        how = f"{wall:.1f} s = {ratio:.0%} of {target:.0f} s; CPU {cpu:.1f} s = {cpu / target:.0%}"
        rows.append(
            f"| {profile} | {n} | {fmt_s(wall)} | {fmt_s(median([r.cpu for r in runs]))} | "
            f"{', '.join(f'{r.wall:.1f}' for r in runs)} | {runs[-1].summary} | "
            f"{verdict(wall < target, how)} |"
        )
        if profile == "thorough":
            continue
        work = Path(tempfile.mkdtemp(prefix="rdq-bench-warm-"))
        args = ["--rdq-plugin=sqlite", "-q", f"--rdq-profile={profile}"]
        run_kit(args, cwd=work)  # fills .hypothesis/
        warm = []
        for i in range(n):
            log(f"profiles: {profile} warm run {i + 1}/{n}")
            shutil.rmtree(work / ".rdq", ignore_errors=True)  # the sqlite file: start empty
            warm.append(run_kit(args, cwd=work))
        shutil.rmtree(work, ignore_errors=True)
        warm_rows.append(
            f"| {profile} | {n} | {fmt_s(median([r.wall for r in warm]))} | "
            f"{fmt_s(median([r.cpu for r in warm]))} | {max(r.rss_mb for r in warm):.0f} MB | "
            f"{max(r.rss_mb for r in runs):.0f} MB |"
        )
    return ["### 1. Full kit run per profile (sqlite, serial, empty temp dir)", "", *rows,
            *warm_rows]


# -- 2. cost split against memory ------------------------------------------------------

SAMPLE_RATE = 250  # py-spy samples per second


def _py_spy() -> str | None:
    beside = Path(PYTHON).parent / "py-spy"
    return str(beside) if beside.exists() else shutil.which("py-spy")


def bench_split(repeat: int, quick: bool) -> list[str]:
    from benchmarks import _sampling as sampling

    head = ["### 2. Where a run's time goes (memory plugin, ci profile)", ""]
    args = ["--rdq-plugin=memory", "-q", "--rdq-profile=ci"]
    plain = []
    for i in range(repeat):
        log(f"split: plain run {i + 1}/{repeat}")
        plain.append(run_kit(args))
    plain_wall = median([r.wall for r in plain])
    spy = _py_spy()
    if spy is None:
        return [*head, "not measured: py-spy is not installed (`pip install -e .[bench]`); "
                f"plain runs: median wall {fmt_s(plain_wall)}"]
    pooled = sampling.Split()
    shares, walls = [], []
    for i in range(repeat):
        log(f"split: sampled run {i + 1}/{repeat}")
        work = Path(tempfile.mkdtemp(prefix="rdq-bench-spy-"))
        raw = work / "samples.txt"
        run = run_kit(args, cwd=work, prefix=[spy, "record", "--gil", "--rate",
                                               str(SAMPLE_RATE), "--format", "raw",
                                               "--output", str(raw), "--"])
        if not raw.exists():
            shutil.rmtree(work, ignore_errors=True)
            return [*head, f"py-spy produced no samples (exit {run.rc}): "
                    + run.out[-400:].replace("\n", " ")]
        one = sampling.split_file(raw, ("rdq_plugin_memory",))
        shutil.rmtree(work, ignore_errors=True)
        pooled.samples.update(one.samples)
        pooled.kit_functions.update(one.kit_functions)
        walls.append(run.wall)
        not_kit = one.samples[sampling.GENERATION] + one.samples[sampling.PLUGIN]
        shares.append(1 - not_kit / (one.total or 1))
    wall_total = sum(walls)
    sampled_s = pooled.total / SAMPLE_RATE
    unsampled = max(wall_total - sampled_s, 0.0)

    def sec(n: float) -> float:  # seconds per run
        return n / SAMPLE_RATE / len(walls)

    log("split: probed run (Hypothesis' own timings, plugin time by the timing proxy)")
    probed = run_kit(["--rdq-plugin", PROXY, "--rdq-option", "wrapped=memory", "-q",
                      "--rdq-profile=ci"], probe=True)
    data = probed.probe
    examples = float(data["hypothesis"]["examples"]) if data else 0.0

    def per_example(n: float) -> str:
        return f"{sec(n) / examples * 1000:.2f} ms" if examples else "—"

    rows = [
        *head,
        f"Sampled with py-spy (`record --gil --rate {SAMPLE_RATE}`: only the thread holding the "
        "GIL, so waiting is never counted) in "
        f"{len(walls)} runs of `--rdq-plugin=memory --rdq-profile=ci` (wall under the sampler: "
        f"{', '.join(f'{w:.1f}' for w in walls)} s; without it: median {fmt_s(plain_wall)} over "
        f"{len(plain)} runs). Every sample is charged to one category (see "
        "`benchmarks/_sampling.py`); seconds are per run, and per generated example "
        f"over the {examples:.0f} examples a run draws (counted by the probed run below).",
        "",
        "| where | seconds | per generated example | share of the sampled time | "
        "share of wall (under the sampler) |",
        "|---|---|---|---|---|",
    ]
    for cat in sampling.CATEGORIES:
        n = pooled.samples[cat]
        rows.append(f"| {cat} | {sec(n):.2f} | {per_example(n)} | "
                    f"{n / (pooled.total or 1):.0%} | {n / SAMPLE_RATE / wall_total:.0%} |")
    rows.append(f"| not sampled (no thread held the GIL: the sampler's pauses, thread "
                f"hand-offs, I/O) | {unsampled / len(walls):.2f} | — | — | "
                f"{unsampled / wall_total:.0%} |")
    # Shares of the sampled time: what the process was doing whenever Python ran.
    # Unsampled moments (no thread held the GIL) are mostly the sampler's own pauses
    # and thread hand-offs; the conservative figure charges all of them to the kit.
    def part(*cats: str) -> float:
        return sum(pooled.samples[c] for c in cats) / (pooled.total or 1)

    outside = part(sampling.GENERATION, sampling.PLUGIN)
    share = 1 - outside
    bound = 1 - outside * pooled.total / SAMPLE_RATE / wall_total
    engine = part(sampling.ENGINE)
    kit_code = part(sampling.KIT_CORE, sampling.KIT_PYTEST, sampling.KIT_SUITES)
    rows += [
        "",
        f"**The kit's own work as issue 6 defines it** (everything but Hypothesis' generation "
        f"and the plugin's calls): **{share:.0%} of the sampled time** (runs: "
        f"{', '.join(f'{x:.0%}' for x in shares)}); {bound:.0%} of the wall time if every "
        f"unsampled moment is charged to the kit. Of the sampled time, Hypothesis' engine is "
        f"{engine:.0%}, the kit's own code {kit_code:.0%}, pytest "
        f"{part(sampling.PYTEST):.0%}, start-up {part(sampling.STARTUP):.0%}.",
        "",
        verdict(share < TARGET_KIT_SHARE, f"{share:.0%}, target < {TARGET_KIT_SHARE:.0%}")
        + " — the kit's own work against memory.",
    ]
    if quick:
        return rows
    rows += ["", "The kit's functions by inclusive time (samples charged to the kit's own "
             "code, per run):", "", "| function | seconds | share of wall |", "|---|---|---|"]
    for name, n in pooled.kit_functions.most_common(12):
        rows.append(f"| `{name}` | {sec(n):.2f} | {n / SAMPLE_RATE / wall_total:.0%} |")
    if data and data.get("plugin"):
        hyp, plugin = data["hypothesis"], data["plugin"]["total"]
        rows += [
            "", f"Cross-check, one run with `-p benchmarks._probe` and the timing proxy "
            f"(wall {probed.wall:.2f} s; Hypothesis renders every example for the probe's "
            f"callback, so it runs slower): {hyp['examples']:.0f} generated examples; "
            f"Hypothesis' own `generate:*` timings {hyp['generate']:.2f} s "
            f"({hyp['generate'] / hyp['examples'] * 1000:.1f} ms per example); time inside "
            f"the plugin's calls {plugin:.2f} s (sampled: "
            f"{sec(pooled.samples[sampling.PLUGIN]):.2f} s).",
        ]
    return rows


# -- 4. peak memory --------------------------------------------------------------------


def bench_memory(repeat: int, quick: bool) -> list[str]:
    rows = ["### 4. Peak memory (ru_maxrss of the pytest process)", "",
            "| run | plugin | peak RSS | wall | result |", "|---|---|---|---|---|"]
    worst = 0.0
    cases: list[tuple[str, str, list[str]]] = [
        ("RDQ-ST-005 only (`-k test_near_one_mib_envelope`, 3 envelopes near 1 MiB)",
         "memory", ["-k", "test_near_one_mib_envelope"]),
        ("RDQ-ST-005 only", "sqlite", ["-k", "test_near_one_mib_envelope"]),
        ("baseline: one tiny test (`-k test_missing_id_reads_as_nothing`)", "sqlite",
         ["-k", "test_missing_id_reads_as_nothing"]),
        ("whole ci run", "sqlite", []),
    ]
    for name, plugin, extra in cases:
        log(f"memory: {name} / {plugin}")
        runs = [run_kit([f"--rdq-plugin={plugin}", "-q", "--rdq-profile=ci", *extra])
                for _ in range(1 if quick or not extra else 2)]
        rss = max(r.rss_mb for r in runs)
        if "ST-005" in name:
            worst = max(worst, rss)
        rows.append(f"| {name} | {plugin} | {rss:.0f} MB | {fmt_s(median([r.wall for r in runs]))}"
                    f" | {runs[-1].summary} |")
    rows += ["", verdict(worst < TARGET_RSS_MB,
                         f"{worst:.0f} MB in the near-1 MiB test, target < {TARGET_RSS_MB:.0f} MB")]
    return rows


# -- 5. time to the first failure ------------------------------------------------------


def bench_first_failure(repeat: int, quick: bool) -> list[str]:
    rows = ["### 5. Time to the first failure (`-x`, ci profile, mutants of tests/mutants/zoo.py)",
            ""]
    try:
        from tests.mutants import zoo  # noqa: F401
    except Exception as exc:  # the zoo belongs to another engineer; it may be mid-edit
        return [*rows, f"tests/mutants/zoo.py is not importable ({type(exc).__name__}: {exc})."]
    rows += ["| mutant | defect | wall to exit | tests run | first failing test |",
             "|---|---|---|---|---|"]
    for mutant, defect in MUTANTS:
        log(f"first-failure: {mutant}")
        runs = [run_kit([f"--rdq-plugin=tests.mutants.zoo:{mutant}", "-x", "-q", "-rf",
                         "--rdq-profile=ci"]) for _ in range(1 if quick else repeat)]
        r = runs[-1]
        failed = re.findall(r"^FAILED (\S+)", r.out, re.M)
        first = failed[0].split("::", 1)[-1] if failed else "(none: " + r.summary + ")"
        first = re.sub(r"\[tests\.mutants\.zoo:[^\]-]+-?", "[", first).replace("[]", "")
        ran = sum(int(n) for n in re.findall(r"(\d+) (?:passed|failed|error)", r.summary))
        rows.append(f"| `{mutant}` | {defect} | {fmt_s(median([x.wall for x in runs]))} | "
                    f"{ran} | `{first[:90]}` |")
    return rows


# -- 7. the stdio bridge (subprocess round trips) --------------------------------------


def bench_stdio(repeat: int, quick: bool) -> list[str]:
    if shutil.which("node") is None:
        return ["### 7. stdio bridge", "", "node is not installed: not measured."]
    plain = []
    for i in range(repeat):
        log(f"stdio: node testee run {i + 1}/{repeat}")
        plain.append(run_kit(["--rdq-plugin=stdio", "--rdq-testee", TESTEE, "-q",
                              "--rdq-profile=ci"]))
    log("stdio: node testee behind the timing proxy")
    timed = run_kit(["--rdq-plugin", PROXY, "--rdq-option", "wrapped=stdio",
                     "--rdq-option", f"wrapped_options=command={TESTEE}", "-q",
                     "--rdq-profile=ci"], probe=True)
    rows = [
        "### 7. The stdio bridge: node testee (plugins_example/node/testee.js), ci profile", "",
        f"Plain runs: {', '.join(f'{r.wall:.1f}' for r in plain)} s wall, median "
        f"{fmt_s(median([r.wall for r in plain]))}, CPU {fmt_s(median([r.cpu for r in plain]))} "
        f"(kit + testee), {plain[-1].summary}.", "",
    ]
    plugin = (timed.probe or {}).get("plugin")
    if not plugin:
        return [*rows, "The timed run produced no data: " + timed.out[-300:]]
    gen = timed.probe["hypothesis"]["generate"]
    rows += [
        f"Behind the timing proxy (one probed run, wall {fmt_s(timed.wall)}): "
        f"{plugin['total']:.2f} s inside the bridge's calls ({plugin['total'] / timed.wall:.0%} "
        f"of wall), generation {gen:.2f} s ({gen / timed.wall:.0%}).", "",
        "| bridge call | calls | total | mean per call |", "|---|---|---|---|",
    ]
    for op, v in sorted(plugin["ops"].items(), key=lambda kv: -kv[1]["seconds"]):
        rows.append(f"| {op} | {v['calls']} | {v['seconds']:.2f} s | "
                    f"{v['seconds'] / max(v['calls'], 1) * 1000:.2f} ms |")
    return [*rows, "", *_stdio_turns(quick)]


def _stdio_turns(quick: bool) -> list[str]:
    """One bridge request at a time, in this process: what a turn costs, and how much of
    it is waiting (wall − this process's CPU) — the most that pipelining a write and
    its read could save per round trip."""
    from rdq_compliance import decode
    from rdq_compliance.storage._stdio import rdq_storage_open

    state = Path(tempfile.mkdtemp(prefix="rdq-bench-turns-"))
    storage = rdq_storage_open({"command": TESTEE, "state_dir": str(state)})
    try:
        adapter = storage.open("tturns")
        env = decode((ROOT / "fixtures/v1/valid/seed-example.json").read_text("utf-8"))
        missing = "01J2ZK7Q8XW5H3N9G4T6B8RDQ0"
        for _ in range(200):
            adapter.read(missing)
        rows = ["Single bridge requests (in-process, seed example, median of 3 × "
                f"{500 if quick else 2000} calls):", "",
                "| request | wall per call | kit CPU per call | waiting per call |",
                "|---|---|---|---|"]
        cases: list[tuple[str, Callable[[], object]]] = [
            ("read of a missing id (a bare turn)", lambda: adapter.read(missing)),
            ("write", lambda: adapter.write(env)),
            ("read", lambda: adapter.read(env.id)),
        ]
        for label, fn in cases:
            walls, cpus = [], []
            for _ in range(3):
                n = 500 if quick else 2000
                t0, c0 = time.perf_counter(), time.process_time()
                for _ in range(n):
                    fn()
                walls.append((time.perf_counter() - t0) / n)
                cpus.append((time.process_time() - c0) / n)
            w, c = median(walls), median(cpus)
            rows.append(f"| {label} | {w * 1e6:.0f} µs | {c * 1e6:.0f} µs | "
                        f"{max(w - c, 0) * 1e6:.0f} µs |")
        storage.drop("tturns")
    finally:
        storage.close()
        shutil.rmtree(state, ignore_errors=True)
    return rows


# -- the document ----------------------------------------------------------------------


def machine() -> list[str]:
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    versions = subprocess.run(
        [PYTHON, "-c", "import hypothesis, pytest; print(pytest.__version__, "
         "hypothesis.__version__)"], capture_output=True, text=True, check=False,
    ).stdout.split()
    bytecode = ("kit runs read and write Python's bytecode caches (a first run writes them, as "
                "pip install does), whatever `PYTHONDONTWRITEBYTECODE` says; section 6 also "
                "measures without them (`cold`)")
    return [
        f"- date: {_dt.datetime.now(_dt.UTC):%Y-%m-%d %H:%M} UTC",
        f"- machine: {os.cpu_count()} CPUs (`nproc` {len(os.sched_getaffinity(0))}), {cpu}, "
        f"{platform.system()} {platform.release()}",
        f"- Python {platform.python_version()}, pytest {versions[0] if versions else '?'}, "
        f"Hypothesis {versions[1] if len(versions) > 1 else '?'}",
        f"- Python bytecode: {bytecode}",
    ]


def _split_block(text: str) -> tuple[str, str, str]:
    if BEGIN not in text or END not in text:
        text += f"\n{BEGIN}\n{END}\n"
    head, rest = text.split(BEGIN, 1)
    block, tail = rest.split(END, 1)
    return head, block, tail


def write_doc(block: str) -> None:
    text = DOC.read_text("utf-8") if DOC.exists() else f"# Performance\n\n{BEGIN}\n{END}\n"
    head, _, tail = _split_block(text)
    DOC.write_text(f"{head}{BEGIN}\n{block}\n{END}{tail}", "utf-8")


_SECTION = re.compile(r"^### (\d+)\. ", re.M)


def replace_sections(block: str, sections: Sequence[list[str]], note: str) -> str:
    """``block`` (the generated part of docs/performance.md) with each of ``sections``
    put in place of the section of its number (from its ``### N.`` heading to the next
    one), or inserted in number order when the block has none; ``note`` goes under each
    replaced heading (when and how it was measured, which differs from the block's)."""
    for rows in sections:
        found = _SECTION.match(rows[0]) if rows else None
        if found is None:
            raise ValueError(f"a section starts with its '### N.' heading, got {rows[:1]!r}")
        number = int(found.group(1))
        text = "\n".join([rows[0], "", note, *rows[1:]]).rstrip() + "\n"
        heads = list(_SECTION.finditer(block))
        mine = [m for m in heads if int(m.group(1)) == number]
        if mine:
            start = mine[0].start()
            later = [m.start() for m in heads if m.start() > start]
            end = later[0] if later else len(block.rstrip()) + 1
            block = block[:start] + text + ("\n" if later else "") + block[end:]
            continue
        after = [m.start() for m in heads if int(m.group(1)) > number]
        at = after[0] if after else len(block.rstrip()) + 1
        block = block[:at].rstrip("\n") + "\n\n" + text + ("\n" if after else "") + block[at:]
    return block.rstrip("\n") + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="one run per measurement and no `thorough` run")
    parser.add_argument("--only", action="append", choices=BENCHMARKS, metavar="NAME",
                        help=f"run only this benchmark (repeatable): {', '.join(BENCHMARKS)}")
    parser.add_argument("--repeat", type=int, default=3, help="runs per median (default 3)")
    parser.add_argument("--no-write", action="store_true", help="do not touch docs/")
    parser.add_argument("--write-sections", action="store_true",
                        help="with --only: put just these sections into docs/performance.md's "
                        "generated block, each noted with its own date and load")
    opts = parser.parse_args(argv)
    if opts.repeat < 1:
        parser.error(f"--repeat={opts.repeat!r} must be at least 1")
    if opts.write_sections and (not opts.only or opts.no_write):
        parser.error("--write-sections goes with --only NAME (and without --no-write)")
    repeat = 1 if opts.quick else opts.repeat
    chosen = opts.only or list(BENCHMARKS)
    funcs = {"profiles": bench_profiles, "split": bench_split, "codec": bench_codec,
             "memory": bench_memory, "first-failure": bench_first_failure,
             "xdist": bench_xdist, "stdio": bench_stdio, "servers": bench_servers}
    log("warm-up: one run writes the bytecode caches (as pip install would)")
    run_kit(["--rdq-plugin=sqlite", "-q", "-k", "no_test_has_this_name"])
    load_before = os.getloadavg()
    started = time.perf_counter()
    sections = [funcs[name](repeat, opts.quick) for name in chosen]
    load_after = os.getloadavg()
    command = "python benchmarks/run.py" + (" --quick" if opts.quick else "") + "".join(
        f" --only {n}" for n in (opts.only or ())
    )
    lines = [
        "## Measured",
        "",
        *machine(),
        f"- load average (1/5/15 min) before: {' / '.join(f'{x:.1f}' for x in load_before)}; "
        f"after: {' / '.join(f'{x:.1f}' for x in load_after)} — on this shared 2-core box other "
        "engineers' test runs compete for the CPUs, so wall times are pessimistic; CPU "
        "times are the steadier number",
        f"- produced by `{command}` in {time.perf_counter() - started:.0f} s",
        "",
    ]
    for section in sections:
        lines += [*section, ""]
    block = "\n".join(lines).rstrip() + "\n"
    print(block)
    if opts.no_write:
        return 0
    if opts.only and set(opts.only) != set(BENCHMARKS):
        if not opts.write_sections:
            log("--only: not writing docs/performance.md (a partial table would replace the full "
                "one); --write-sections puts just these sections in, --no-write silences this")
            return 0
        note = (f"*Re-measured on its own at {_dt.datetime.now(_dt.UTC):%Y-%m-%d %H:%M} UTC by "
                f"`{command} --write-sections`; load average (1/5/15 min) before "
                f"{' / '.join(f'{x:.1f}' for x in load_before)}, after "
                f"{' / '.join(f'{x:.1f}' for x in load_after)}.*")
        _, old, _ = _split_block(DOC.read_text("utf-8"))
        block = replace_sections(old.strip("\n") + "\n", sections, note)
    write_doc(block)
    log(f"wrote {DOC.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
