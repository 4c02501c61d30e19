"""Section 4 of ``benchmarks/run.py``: peak memory (``ru_maxrss``) of the pytest process."""

from __future__ import annotations

from benchmarks._kitrun import fmt_s, log, median, run_kit, verdict

TARGET_RSS_MB = 300.0  # target of issue 6

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
