"""Section 7 of ``benchmarks/run.py``: the stdio bridge with the node testee
(``plugins_example/node/testee.js``): whole runs, time per bridge call behind the timing
proxy, and single requests in this process."""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from benchmarks._kitrun import PROXY, ROOT, TESTEE, fmt_s, log, median, run_kit

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
