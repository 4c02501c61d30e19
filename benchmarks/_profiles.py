"""Section 1 of ``benchmarks/run.py``: a full kit run per profile (sqlite, serial), from an
empty temporary directory and again warm (Hypothesis' ``.hypothesis/`` caches kept)."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from benchmarks._kitrun import fmt_s, log, median, run_kit, verdict

# Targets of issue 6.
TARGET_WALL = {"quick": 5.0, "ci": 30.0, "thorough": 300.0}

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
