"""Measure the rdq compliance kit on this machine (issue 6) and publish the numbers.

    python benchmarks/run.py                  # everything (about 5 minutes on 2 cores)
    python benchmarks/run.py --quick          # one run each, no `thorough` (about 2 minutes)
    python benchmarks/run.py --only codec     # one benchmark (repeatable)
    python benchmarks/run.py --no-write       # print the table, leave docs/ alone

Benchmarks: profiles, split, codec, memory, first-failure, xdist. Every kit run is a
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
import json
import linecache
import os
import platform
import pstats
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "performance.md"
BEGIN, END = "<!-- bench:begin -->", "<!-- bench:end -->"
PYTHON = sys.executable
PROXY = "benchmarks._timing:proxy"
BENCHMARKS = ("profiles", "split", "codec", "memory", "first-failure", "xdist", "stdio")
TESTEE = f"node {ROOT / 'plugins_example' / 'node' / 'testee.js'}"

# Targets of issue 6.
TARGET_WALL = {"quick": 5.0, "ci": 30.0, "thorough": 300.0}
TARGET_KIT_SHARE = 0.25
TARGET_CODEC = 10_000.0
TARGET_RSS_MB = 300.0
TARGET_SPEEDUP = 1.5

# Mutants of tests/mutants/zoo.py (if importable): (id, the requirement that catches it).
MUTANTS = (
    ("local_tz_shift", "timestamps shifted by the local zone"),
    ("int64_as_double", "64-bit ints stored as doubles"),
    ("namespace_ignored", "namespaces not isolated"),
    ("mysql_text_64k", "TEXT column cuts near-1 MiB envelopes"),
    ("t_drop_unknown", "stdio testee dropping unknown fields"),
)


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
    env.update(extra or {})
    return env


def run_kit(
    args: Sequence[str], *, probe: bool = False, cwd: Path | None = None,
    python_args: Sequence[str] = (), timeout: float = 900,
) -> Run:  # fmt: skip
    """One ``pytest`` process in an empty temp dir (or ``cwd``); returns its costs."""
    own = cwd is None
    work = Path(tempfile.mkdtemp(prefix="rdq-bench-")) if own else cwd
    assert work is not None
    extra: dict[str, str] = {}
    argv = [PYTHON, *python_args, "-m", "pytest", "-p", "no:cacheprovider", *args]
    if probe:
        argv[len(python_args) + 3:len(python_args) + 3] = ["-p", "benchmarks._probe"]
        extra["RDQ_BENCH_PROBE"] = str(work / "probe.json")
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

_GROUPS = (
    ("plugin (memory, on the kit's worker thread)", ("rdq_plugin_memory", "benchmarks/_timing")),
    ("hypothesis, once per fresh directory: unicode codec table, source-constant scan",
     ("hypothesis/internal/charmap.py", "hypothesis/internal/constants_ast.py")),
    ("generation: kit strategies", ("rdq_compliance/strategies/", "suites/_strategies")),
    ("hypothesis: drawing + engine (data tree, spans, mutation)", ("site-packages/hypothesis/",)),
    ("kit: envelope core (validate, diff, encode, parse)", ("rdq_compliance/envelope/",)),
    ("kit: pytest layer (_context, _guard, _runtime, kit, reporting)",
     ("rdq_compliance/_pytest/", "rdq_compliance/reporting/", "rdq_compliance/_corpus",
      "rdq_compliance/_requirements", "rdq_compliance/storage/")),
    ("kit: suites (test bodies, fixed envelopes)", ("rdq_compliance/suites/",)),
    ("pytest + pluggy", ("site-packages/_pytest/", "site-packages/pluggy/",
                         "site-packages/pytest/")),
    ("stdlib copy.deepcopy (kit: only for values that are not plain JSON)", ("copy.py",)),
    ("imports (module loading, compiling)", ("<frozen importlib", "<frozen zipimport")),
    ("waiting for the plugin thread (lock/Event wait)", ("threading.py",)),
)


def _group(filename: str, func: str) -> str:
    key = f"{filename}:{func}"
    for name, needles in _GROUPS:
        if any(n in key for n in needles):
            return name
    return "other (stdlib, json, re, ...)"


_KitRow = tuple[str, float, float, int]


def profile_groups(path: Path) -> tuple[list[tuple[str, float]], list[_KitRow]]:
    """Self time by owner, and the kit's own functions by cumulative time.

    Built-in functions (``~`` in pstats) have no file: their self time is shared
    among their callers, in proportion to the time each caller spent in them, so
    that e.g. ``str.encode`` called by Hypothesis' codec table counts there.
    """
    stats = pstats.Stats(str(path))
    groups: dict[str, float] = {}
    kit: list[_KitRow] = []
    raw = stats.stats  # type: ignore[attr-defined]

    def add(group: str, seconds: float) -> None:
        groups[group] = groups.get(group, 0.0) + seconds

    for (filename, line, func), (_cc, nc, tt, ct, callers) in raw.items():
        if filename == "~" and callers:
            if "acquire" in func or "wait" in func:
                add("waiting for the plugin thread (lock/Event wait)", tt)
                continue
            weights = {c: v[2] for c, v in callers.items()}
            total = sum(weights.values()) or 1.0
            for (cf, _cl, cfn), w in weights.items():
                add(_group(cf, cfn), tt * w / total)
            continue
        add(_group(filename, func), tt)
        ours = "rdq_compliance/" in filename and not any(
            n in filename for n in ("/strategies/", "_strategies", "/suites/test_"))
        # Hypothesis' @given wrappers borrow the check's name and a kit line;
        # keep only real definitions (the source line says "def <name>").
        if ours and f"def {func}" in linecache.getline(filename, line):
            short = filename.split("rdq_compliance/", 1)[1]
            kit.append((f"{short}:{line} {func}", ct, tt, nc))
    kit.sort(key=lambda r: -r[1])
    return sorted(groups.items(), key=lambda kv: -kv[1]), kit


def bench_split(repeat: int, quick: bool) -> list[str]:
    args = ["--rdq-plugin", PROXY, "--rdq-option", "wrapped=memory", "-q", "--rdq-profile=ci"]
    plain, probed = [], []
    for i in range(repeat):
        log(f"split: plain run {i + 1}/{repeat}")
        plain.append(run_kit(["--rdq-plugin=memory", "-q", "--rdq-profile=ci"]))
        log(f"split: probed run {i + 1}/{repeat}")
        probed.append(run_kit(args, probe=True))
    good = [r for r in probed if r.probe and r.probe.get("plugin")]
    if not good:
        return ["### 2. Cost split (memory, ci)", "", "probe produced no data: "
                + probed[-1].out[-500:]]

    def med(fn: Callable[[Run], float]) -> float:
        return median([fn(r) for r in good])

    wall = med(lambda r: r.wall)
    gen = med(lambda r: r.probe["hypothesis"]["generate"])
    exe = med(lambda r: r.probe["hypothesis"]["execute"])
    plugin = med(lambda r: r.probe["plugin"]["total"])
    startup = med(lambda r: r.probe["marks"]["collected"])
    tests = med(lambda r: r.probe["items"]["seconds"])
    examples = med(lambda r: r.probe["hypothesis"]["examples"])
    kit = wall - gen - plugin
    plain_wall = median([r.wall for r in plain])
    share = kit / wall
    plain_kit = plain_wall - gen - plugin
    plain_share = plain_kit / plain_wall
    rows = [
        "### 2. Where a run's time goes (memory plugin, ci profile)",
        "",
        f"Median of {len(good)} probed runs (`-p benchmarks._probe`, plugin wrapped by "
        f"`{PROXY}`). Unprobed `--rdq-plugin=memory` runs: median wall "
        f"{fmt_s(plain_wall)}; the probe adds {wall - plain_wall:+.2f} s (Hypothesis builds "
        "a printable form of each example once an observability callback is registered).",
        "",
        "| part | seconds | share of wall | per generated example |",
        "|---|---|---|---|",
        f"| wall time of the run | {wall:.2f} | 100% | — |",
        f"| Hypothesis generation (`generate:*` timings) | {gen:.2f} | {gen / wall:.0%} | "
        f"{gen / examples * 1000:.1f} ms |",
        f"| inside the plugin's calls (timing proxy) | {plugin:.2f} | {plugin / wall:.0%} | "
        f"{plugin / examples * 1000:.2f} ms (all calls, incl. fixed tests) |",
        f"| **kit's own work = wall − generation − plugin** | **{kit:.2f}** | **{share:.0%}** | "
        f"{kit / examples * 1000:.1f} ms |",
        f"| … of which: interpreter start, imports, collection | {startup:.2f} | "
        f"{startup / wall:.0%} | — |",
        f"| … of which: executing checks (`execute:*`, minus plugin) | "
        f"{max(exe - plugin, 0):.2f} | {max(exe - plugin, 0) / wall:.0%} | "
        f"{max(exe - plugin, 0) / examples * 1000:.2f} ms |",
        f"| … of which: the rest (Hypothesis engine, pytest, fixed tests, fixtures) | "
        f"{max(kit - startup - max(exe - plugin, 0), 0):.2f} | "
        f"{max(kit - startup - max(exe - plugin, 0), 0) / wall:.0%} | — |",
        f"| generated examples | {examples:.0f} | | |",
        f"| tests (setup + call + teardown) | {tests:.2f} | {tests / wall:.0%} | |",
        "",
        f"Without the probe's overhead (unprobed wall − generation − plugin): kit's own work "
        f"{plain_kit:.2f} s = {plain_share:.0%} of {plain_wall:.2f} s.",
        "",
        verdict(plain_share < TARGET_KIT_SHARE,
                f"kit share {plain_share:.0%} unprobed / {share:.0%} probed, target < "
                f"{TARGET_KIT_SHARE:.0%}") + " — the kit's own work against memory.",
    ]
    if quick:
        return rows
    log("split: cProfile run")
    work = Path(tempfile.mkdtemp(prefix="rdq-bench-prof-"))
    prof = work / "prof.out"
    run_kit(["--rdq-plugin=memory", "-q", "--rdq-profile=ci"], cwd=work,
            python_args=["-m", "cProfile", "-o", str(prof)])
    if not prof.exists():
        return rows
    groups, kit_funcs = profile_groups(prof)
    total = sum(t for _, t in groups)
    rows += ["", "cProfile of one unprobed run (main thread; self time by owner; cProfile "
             "slows Python code about 2x, so read shares, not seconds):", "",
             "| owner | self time | share |", "|---|---|---|"]
    rows += [f"| {g} | {t:.2f} s | {t / total:.0%} |" for g, t in groups]
    rows += ["", "The kit's own functions by cumulative time (same profile, top 15):", "",
             "| function | cumulative | self | calls |", "|---|---|---|---|"]
    rows += [f"| `{name}` | {ct:.2f} s | {tt:.2f} s | {nc} |" for name, ct, tt, nc in
             kit_funcs[:15]]
    shutil.rmtree(work, ignore_errors=True)
    return rows


# -- 3. codec throughput ---------------------------------------------------------------


def bench_codec(repeat: int, quick: bool) -> list[str]:
    sys.path.insert(0, str(ROOT))
    import copy

    from rdq_compliance._pytest._context import _private_copy
    from rdq_compliance.envelope import decode, diff, encode, validate

    text = (ROOT / "fixtures" / "v1" / "valid" / "seed-example.json").read_text("utf-8")
    env = decode(text)
    compact = encode(env)

    def rate(
        fn: Callable[[], object], seconds: float = 0.5 if quick else 1.0
    ) -> tuple[float, float]:
        """Calls per second of CPU time (this process) and of wall time, medians. On a
        shared box the CPU rate is what one idle core would do; the wall rate shrinks
        with the load."""
        cpu_rates, wall_rates = [], []
        for _ in range(max(repeat, 3)):
            n, start, cpu0 = 0, time.perf_counter(), time.process_time()
            while (elapsed := time.perf_counter() - start) < seconds:
                for _ in range(100):
                    fn()
                n += 100
            cpu_rates.append(n / max(time.process_time() - cpu0, 1e-9))
            wall_rates.append(n / elapsed)
        return median(cpu_rates), median(wall_rates)

    def full() -> None:
        e = decode(text)
        validate(e)
        encode(e)

    cases: list[tuple[str, Callable[[], object]]] = [
        ("decode + validate + encode (the round trip of issue 6)", full),
        ("decode(text) alone (parse + validate + build)", lambda: decode(text)),
        ("decode(compact text) alone", lambda: decode(compact)),
        ("validate(model)", lambda: validate(env)),
        ("validate(text)", lambda: validate(text)),
        ("encode(model)", lambda: encode(env)),
    ]
    twin = copy.deepcopy(env)

    def kit_checks() -> None:
        # What Namespace.write + Namespace.expect add to one plugin round trip
        # (rdq_compliance/_pytest/_context.py): copy for the plugin, mutation
        # diff, model validation of what was read, comparison with the expected.
        # (Through the stdio bridge the model validation is skipped: the bridge
        # validated the wire JSON the model was built from.)
        given = _private_copy(env)
        diff(env, given)
        validate(twin, versions=None)
        diff(env, twin)

    kit_cases: list[tuple[str, Callable[[], object]]] = [
        ("the kit's checks per round trip (private copy + diff + validate(model) + diff)",
         kit_checks),
        ("the kit's private copy of the model (`_context._private_copy`)",
         lambda: _private_copy(env)),
        ("copy.deepcopy(model) (what the kit used before)", lambda: copy.deepcopy(env)),
        ("diff(model, equal model)", lambda: diff(env, twin)),
    ]
    rows = [f"### 3. Codec throughput (seed example, {len(text.encode())} bytes pretty, "
            f"{len(compact.encode())} bytes compact; in-process, median of {max(repeat, 3)})",
            "", "| operation | per CPU second | per call (CPU) | per wall second |",
            "|---|---|---|---|"]
    first: tuple[float, float] | None = None
    for name, fn in cases:
        log(f"codec: {name}")
        r, w = rate(fn)
        first = first or (r, w)
        rows.append(f"| {name} | {r:,.0f} | {1e6 / r:.1f} µs | {w:,.0f} |")
    assert first is not None
    rows += ["", verdict(first[0] >= TARGET_CODEC,
                         f"{first[0]:,.0f} round trips per CPU second ({first[1]:,.0f} per wall "
                         f"second under this load), target ≥ {TARGET_CODEC:,.0f}/s"),
             "", "What the kit itself does around every plugin round trip of this envelope "
             "(compare: the memory plugin's write + read is one encode + one parse_json + "
             "from_json):", "", "| operation | per CPU second | per call (CPU) | per wall second |",
             "|---|---|---|---|"]
    for name, fn in kit_cases:
        log(f"codec: {name}")
        r, w = rate(fn)
        rows.append(f"| {name} | {r:,.0f} | {1e6 / r:.1f} µs | {w:,.0f} |")
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
        sys.path.insert(0, str(ROOT))
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


# -- 6. xdist --------------------------------------------------------------------------


def bench_xdist(repeat: int, quick: bool) -> list[str]:
    serial, para = [], []
    for i in range(repeat):
        log(f"xdist: serial {i + 1}/{repeat}")
        serial.append(run_kit(["--rdq-plugin=sqlite", "-q", "--rdq-profile=ci"]))
        log(f"xdist: -n 2 {i + 1}/{repeat}")
        para.append(run_kit(["--rdq-plugin=sqlite", "-q", "--rdq-profile=ci", "-n", "2"]))
    s, p = median([r.wall for r in serial]), median([r.wall for r in para])
    speedup = s / p
    s_cpu, p_cpu = median([r.cpu for r in serial]), median([r.cpu for r in para])
    return [
        "### 6. `-n 2` against serial (sqlite, ci)", "",
        "| mode | runs' wall | wall (median) | CPU (median) | result |", "|---|---|---|---|---|",
        f"| serial | {', '.join(f'{r.wall:.1f}' for r in serial)} | {fmt_s(s)} | "
        f"{fmt_s(median([r.cpu for r in serial]))} | {serial[-1].summary} |",
        f"| `-n 2` | {', '.join(f'{r.wall:.1f}' for r in para)} | {fmt_s(p)} | "
        f"{fmt_s(median([r.cpu for r in para]))} | {para[-1].summary} |",
        "", verdict(speedup >= TARGET_SPEEDUP, f"{speedup:.2f}x, target ≥ {TARGET_SPEEDUP}x"),
        "", f"CPU: `-n 2` spends {p_cpu - s_cpu:+.2f} s more than serial (controller and two "
        "workers each start Python, import and collect). Two idle cores could at best run "
        f"it in about {p_cpu / 2:.2f} s, {s_cpu / (p_cpu / 2):.2f}x the serial CPU time "
        "(an estimate: it ignores the serial start of the controller and the tail).",
    ]


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
    bytecode = ("not written (`PYTHONDONTWRITEBYTECODE` is set: every process compiles, and "
                "pytest assertion-rewrites, the kit's and Hypothesis' modules anew)"
                if os.environ.get("PYTHONDONTWRITEBYTECODE") else "written and reused")
    return [
        f"- date: {_dt.datetime.now(_dt.UTC):%Y-%m-%d %H:%M} UTC",
        f"- machine: {os.cpu_count()} CPUs (`nproc` {len(os.sched_getaffinity(0))}), {cpu}, "
        f"{platform.system()} {platform.release()}",
        f"- Python {platform.python_version()}, pytest {versions[0] if versions else '?'}, "
        f"Hypothesis {versions[1] if len(versions) > 1 else '?'}",
        f"- Python bytecode: {bytecode}",
    ]


def write_doc(block: str) -> None:
    text = DOC.read_text("utf-8") if DOC.exists() else f"# Performance\n\n{BEGIN}\n{END}\n"
    if BEGIN not in text or END not in text:
        text += f"\n{BEGIN}\n{END}\n"
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    DOC.write_text(f"{head}{BEGIN}\n{block}\n{END}{tail}", "utf-8")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="one run per measurement and no `thorough` run")
    parser.add_argument("--only", action="append", choices=BENCHMARKS, metavar="NAME",
                        help=f"run only this benchmark (repeatable): {', '.join(BENCHMARKS)}")
    parser.add_argument("--repeat", type=int, default=3, help="runs per median (default 3)")
    parser.add_argument("--no-write", action="store_true", help="do not touch docs/")
    opts = parser.parse_args(argv)
    if opts.repeat < 1:
        parser.error(f"--repeat={opts.repeat!r} must be at least 1")
    repeat = 1 if opts.quick else opts.repeat
    chosen = opts.only or list(BENCHMARKS)
    funcs = {"profiles": bench_profiles, "split": bench_split, "codec": bench_codec,
             "memory": bench_memory, "first-failure": bench_first_failure,
             "xdist": bench_xdist, "stdio": bench_stdio}
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
    if not opts.no_write:
        if opts.only and set(opts.only) != set(BENCHMARKS):
            log("--only: not writing docs/performance.md (a partial table would replace the full "
                "one); use --no-write to silence this")
        else:
            write_doc(block)
            log(f"wrote {DOC.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
