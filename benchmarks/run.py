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
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# In-process benchmarks import benchmarks._sampling, tests.mutants and the kit from here.
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks._codec import bench_codec  # noqa: E402
from benchmarks._doc import DOC, _split_block, machine, replace_sections, write_doc  # noqa: E402
from benchmarks._first_failure import bench_first_failure  # noqa: E402
from benchmarks._kitrun import (  # noqa: E402  (re-exported: benchmarks.failing, tests)
    Run,
    fmt_s,
    log,
    median,
    run_kit,
    verdict,
)
from benchmarks._memory import bench_memory  # noqa: E402
from benchmarks._profiles import bench_profiles  # noqa: E402
from benchmarks._servers import bench_servers  # noqa: E402
from benchmarks._split import bench_split  # noqa: E402
from benchmarks._stdio import bench_stdio  # noqa: E402
from benchmarks._xdist import bench_xdist  # noqa: E402

__all__ = ["BENCHMARKS", "Run", "fmt_s", "log", "main", "median", "run_kit", "verdict"]

# The sections, in the report's order: name (for --only) -> its benchmark.
SECTIONS: dict[str, Callable[[int, bool], list[str]]] = {
    "profiles": bench_profiles,  # 1, benchmarks/_profiles.py
    "split": bench_split,  # 2, _split.py
    "codec": bench_codec,  # 3, _codec.py
    "memory": bench_memory,  # 4, _memory.py
    "first-failure": bench_first_failure,  # 5, _first_failure.py
    "xdist": bench_xdist,  # 6, _xdist.py
    "stdio": bench_stdio,  # 7, _stdio.py
    "servers": bench_servers,  # 8, _servers.py
}
BENCHMARKS = tuple(SECTIONS)


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
    log("warm-up: one run writes the bytecode caches (as pip install would)")
    run_kit(["--rdq-plugin=sqlite", "-q", "-k", "no_test_has_this_name"])
    load_before = os.getloadavg()
    started = time.perf_counter()
    sections = [SECTIONS[name](repeat, opts.quick) for name in chosen]
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
