"""Section 5 of ``benchmarks/run.py``: time to the first failure (``-x``) against mutants of
``tests/mutants/zoo.py``."""

from __future__ import annotations

import re

from benchmarks._kitrun import fmt_s, log, median, run_kit

# Mutants of tests/mutants/zoo.py (if importable): (id, the requirement that catches it).
MUTANTS = (
    ("local_tz_shift", "timestamps shifted by the local zone"),
    ("int64_as_double", "64-bit ints stored as doubles"),
    ("namespace_ignored", "namespaces not isolated"),
    ("mysql_text_64k", "TEXT column cuts near-1 MiB envelopes"),
    ("t_drop_unknown", "stdio testee dropping unknown fields"),
)


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
