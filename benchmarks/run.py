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
import os
import platform
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
# In-process benchmarks import benchmarks._sampling, tests.mutants and the kit from here.
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
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
    # Warm by default: bytecode caches are written once and reused, as after a
    # pip install or any earlier run. run_kit(cold=True) measures without them.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.pop("PYTHONPYCACHEPREFIX", None)
    env.update(extra or {})
    return env


def run_kit(
    args: Sequence[str], *, probe: bool = False, cwd: Path | None = None,
    python_args: Sequence[str] = (), prefix: Sequence[str] = (), timeout: float = 900,
    cold: bool = False, python: str = PYTHON,
) -> Run:  # fmt: skip
    """One ``pytest`` process in an empty temp dir (or ``cwd``); returns its costs.

    ``cold``: no bytecode cache to read or write (an empty ``PYTHONPYCACHEPREFIX`` and
    ``PYTHONDONTWRITEBYTECODE``): every process compiles, and pytest assertion-rewrites,
    the kit's and Hypothesis' modules, as in a fresh virtualenv on a machine that sets
    ``PYTHONDONTWRITEBYTECODE``."""
    own = cwd is None
    work = Path(tempfile.mkdtemp(prefix="rdq-bench-")) if own else cwd
    assert work is not None
    extra: dict[str, str] = {}
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


# -- 3. codec throughput ---------------------------------------------------------------


def bench_codec(repeat: int, quick: bool) -> list[str]:
    import copy

    from rdq_compliance import decode, diff, encode, validate
    from rdq_compliance.testing._copy import private_copy

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
        # (rdq_compliance/testing/_namespaces.py): copy for the plugin, mutation
        # diff, model validation of what was read, comparison with the expected.
        # (Through the stdio bridge the model validation is skipped: the bridge
        # validated the wire JSON the model was built from.)
        given = private_copy(env)
        diff(env, given)
        validate(twin, versions=None)
        diff(env, twin)

    kit_cases: list[tuple[str, Callable[[], object]]] = [
        ("the kit's checks per round trip (private copy + diff + validate(model) + diff)",
         kit_checks),
        ("the kit's private copy of the model (`testing._copy.private_copy`)",
         lambda: private_copy(env)),
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
    rows += _codec_instructions()
    # In a process of its own: drawing big envelopes here would raise this process's
    # peak RSS, which the kit processes it starts inherit (Linux keeps the high-water
    # mark across exec), and section 4 would measure it.
    log("codec: the core's fast paths against their general paths (own process)")
    child = subprocess.run(
        [PYTHON, "-c", "import json, sys; from benchmarks.run import _fast_paths; "
         f"print(json.dumps(_fast_paths({repeat}, {quick})))"],
        cwd=ROOT, env=_env(), capture_output=True, text=True, check=False)
    if child.returncode:
        return [*rows, "", f"fast paths: not measured (exit {child.returncode}): "
                + child.stderr[-400:].replace("\n", " ")]
    fast: list[str] = json.loads(child.stdout.splitlines()[-1])
    return rows + fast


CODEC_LOOPS = 400
"""Round trips counted under valgrind (a second run counts none: start-up and imports)."""


def _codec_instructions() -> list[str]:
    """Instructions per codec round trip, counted by valgrind's cachegrind: the same
    number run after run (timings here move by ±10 % with the neighbours' load), to
    compare code states on any machine."""
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        return ["", "Instructions per round trip: not counted (valgrind is not on PATH)."]
    log("codec: instructions per round trip (valgrind, two runs)")
    # Bytecode caches first: compiling a changed module inside one counted run only
    # would add its cost to the difference.
    subprocess.run([PYTHON, "-c", "import benchmarks._codec_loop"], cwd=ROOT, env=_env(),
                   check=False)
    counts = []
    for n in (CODEC_LOOPS, 0):
        child = subprocess.run(
            [valgrind, "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null",
             PYTHON, "-m", "benchmarks._codec_loop", str(n)],
            cwd=ROOT, env=_env(), capture_output=True, text=True, check=False)
        found = re.search(r"I\s+refs:\s+([\d,]+)", child.stderr)
        if child.returncode or found is None:
            return ["", f"Instructions per round trip: not counted (valgrind exit "
                    f"{child.returncode}): " + child.stderr[-300:].replace("\n", " ")]
        counts.append(int(found.group(1).replace(",", "")))
    per = (counts[0] - counts[1]) / CODEC_LOOPS
    return ["", f"Instructions per round trip (decode + validate + encode, valgrind "
            f"cachegrind, {CODEC_LOOPS} round trips less a run of none): **{per:,.0f}**: "
            "a count that does not move with the machine's load."]


GENERATED = 300
"""Envelopes drawn for ``_fast_paths``, the same ones every run (derandomized)."""


def _drawn_envelopes(count: int) -> list[Any]:
    """``count`` envelopes as RDQ-RT-001 draws them at ``ci`` (``extremes=0.1``)."""
    from hypothesis import HealthCheck, Phase, given, settings

    from rdq_compliance.strategies import envelopes

    drawn: list[Any] = []

    @settings(max_examples=count, derandomize=True, database=None, deadline=None,
              phases=[Phase.generate], suppress_health_check=list(HealthCheck))
    @given(envelopes(extremes=0.1))
    def draw(env: Any) -> None:
        drawn.append(env)

    draw()
    return drawn


def _fast_paths(repeat: int, quick: bool) -> list[str]:
    """The core's fast paths (issue 11) against their general paths, over generated
    envelopes rather than the seed example: deep values, big payloads and long histories
    included, as the kit meets them (tests/envelope/test_fast_paths.py checks that each
    computes what its general path does)."""
    import dataclasses

    from rdq_compliance import diff, encode, parse_json, to_json, validate
    from rdq_compliance.envelope import _diff
    from rdq_compliance.envelope._codec import _build_valid, _Builder
    from rdq_compliance.envelope._deep import copy_json
    from rdq_compliance.envelope._validate import _ModelChecker, _validate_model

    envs = _drawn_envelopes(GENERATED // 3 if quick else GENERATED)

    def copy_of(env: Any) -> Any:  # new containers, shared leaves: the kit's private copy
        def error(e: Any) -> Any:
            return e and dataclasses.replace(e, detail=copy_json(e.detail),
                                             extra=copy_json(e.extra))

        return dataclasses.replace(
            env, extra=copy_json(env.extra), headers=dict(env.headers),
            attempts=tuple(dataclasses.replace(a, extra=copy_json(a.extra), error=error(a.error))
                           for a in env.attempts))

    copies = [copy_of(env) for env in envs]
    pairs = list(zip(envs, copies, strict=True))
    fast_json = _diff.same_json

    def general_diff(e: Any, a: Any) -> object:
        _diff.same_json = lambda x, y: False  # type: ignore[assignment]
        try:
            return diff(e, a)
        finally:
            _diff.same_json = fast_json

    cases: list[tuple[str, Callable[[Any, Any], object], Callable[[Any, Any], object]]] = [
        ("diff(env, copy): `same_json` first / the pointer-building walk only",
         diff, general_diff),
        ("validate(model): the payload's base64 counted / built and written",
         lambda e, c: validate(c, versions=None),
         lambda e, c: _validate_model(c, None, 1024 * 1024, payload_text=True)),
    ]
    parsed = {id(e): parse_json(encode(e)) for e in envs}
    cases += [
        ("decode: validated JSON read as it is (`_build_valid`) / the checking builder",
         lambda e, c: _build_valid(parsed[id(e)]),
         lambda e, c: _Builder(copy=True).envelope(parsed[id(e)])),
        ("model -> wire (one walk): trusting types (`to_json`) / checking them (`_ModelChecker`)",
         lambda e, c: to_json(c),
         lambda e, c: _ModelChecker(payload_text=True).envelope(c)),
    ]

    passes = max(repeat, 5)

    def per_envelope(*fns: Callable[[Any, Any], object]) -> list[float]:
        """Each function's median pass, the passes interleaved: this machine's speed
        drifts within seconds, and measuring one side after the other skewed them."""
        times: list[list[float]] = [[] for _ in fns]
        for _ in range(passes):
            for fn, spent in zip(fns, times, strict=True):
                cpu0 = time.process_time()
                for e, c in pairs:
                    fn(e, c)
                spent.append(time.process_time() - cpu0)
        return [median(spent) / len(pairs) for spent in times]

    rows = ["", f"The core's fast paths against their general paths, over {len(envs)} envelopes "
            "drawn as RDQ-RT-001 draws them at `ci` (`envelopes(extremes=0.1)`, derandomized: "
            "payloads to 256 KiB, up to 64 attempts, values to 400 levels deep); CPU time per "
            f"envelope, median of {passes} interleaved passes:", "",
            "| operation: fast / general | fast path | general path | saved |", "|---|---|---|---|"]
    for name, fast, general in cases:
        f, g = per_envelope(fast, general)
        rows.append(f"| {name} | {f * 1e6:.1f} µs | {g * 1e6:.1f} µs | {1 - f / g:.0%} |")
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


# -- 6. xdist --------------------------------------------------------------------------


def _wheel_python() -> tuple[str | None, Path]:
    """A throw-away virtualenv with the kit and the sqlite plugin installed as wheels, as
    a plugin's CI installs them (site-packages, not this checkout): Hypothesis then
    does not count the kit's modules as local code to scan for constants."""
    venv = Path(tempfile.mkdtemp(prefix="rdq-bench-wheel-"))
    subprocess.run([PYTHON, "-m", "venv", str(venv)], check=True)
    py = str(venv / "bin" / "python")
    done = subprocess.run(
        [py, "-m", "pip", "install", "-q", str(ROOT), str(ROOT / "plugins_example" / "sqlite"),
         "pytest-xdist"], capture_output=True, text=True, check=False)
    return (py if done.returncode == 0 else None), venv


def bench_xdist(repeat: int, quick: bool) -> list[str]:
    args = ["--rdq-plugin=sqlite", "-q", "--rdq-profile=ci"]
    rows = ["### 6. `-n 2` against serial (sqlite, ci)", "",
            "| kit installed | bytecode | mode | runs' wall | wall (median) | CPU (median) "
            "| result |",
            "|---|---|---|---|---|---|---|"]
    verdicts = []
    log("xdist: a virtualenv with the kit installed from a wheel")
    wheel, venv = _wheel_python()
    setups = [("editable (this checkout)", PYTHON, False, "cached"),
              ("editable (this checkout)", PYTHON, True, "none (cold)")]
    if wheel is not None:
        run_kit(["--rdq-plugin=sqlite", "-q", "-k", "no_test_has_this_name"], python=wheel)
        setups.append(("wheel (site-packages)", wheel, False, "cached"))
    else:
        verdicts.append("- the wheel install failed: not measured")
    for installed, python, cold, label in setups:
        serial, para = [], []
        for i in range(repeat):
            log(f"xdist ({installed}, {label}): serial {i + 1}/{repeat}")
            serial.append(run_kit(args, cold=cold, python=python))
            log(f"xdist ({installed}, {label}): -n 2 {i + 1}/{repeat}")
            para.append(run_kit([*args, "-n", "2"], cold=cold, python=python))
        for mode, runs in (("serial", serial), ("`-n 2`", para)):
            rows.append(
                f"| {installed} | {label} | {mode} | {', '.join(f'{r.wall:.1f}' for r in runs)} | "
                f"{fmt_s(median([r.wall for r in runs]))} | "
                f"{fmt_s(median([r.cpu for r in runs]))} | {runs[-1].summary} |")
        speedup = median([r.wall for r in serial]) / median([r.wall for r in para])
        extra_cpu = median([r.cpu for r in para]) - median([r.cpu for r in serial])
        verdicts.append(
            f"- {installed}, bytecode {label}: "
            + verdict(speedup >= TARGET_SPEEDUP, f"{speedup:.2f}x, target ≥ {TARGET_SPEEDUP}x")
            + f"; `-n 2` spends {extra_cpu:+.2f} s CPU more than serial")
    shutil.rmtree(venv, ignore_errors=True)
    return [*rows, "", *verdicts]


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
