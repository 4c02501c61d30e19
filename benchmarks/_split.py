"""Section 2 of ``benchmarks/run.py``: where a run's time goes (memory plugin, ci), sampled
with py-spy and charged by ``benchmarks/_sampling.py``, with a probed run as cross-check."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from benchmarks._kitrun import PROXY, PYTHON, fmt_s, log, median, run_kit, verdict

# Target of issue 6: the kit's own work (all but generation and the plugin's calls).
TARGET_KIT_SHARE = 0.25

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
