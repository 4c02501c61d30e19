"""Section 3 of ``benchmarks/run.py``: codec throughput, the kit's checks per round trip,
instructions per round trip (valgrind) and the core's fast paths against their general paths."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import time
from collections.abc import Callable
from typing import Any

from benchmarks._kitrun import PYTHON, ROOT, _env, log, median, verdict

TARGET_CODEC = 10_000.0

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
        # (rdq_compliance/testing/_namespace_handle.py): copy for the plugin, mutation
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
        [PYTHON, "-c", "import json, sys; from benchmarks._codec import _fast_paths; "
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
    from rdq_compliance.envelope import _diff_json
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
    fast_json = _diff_json.same_json

    def general_diff(e: Any, a: Any) -> object:
        _diff_json.same_json = lambda x, y: False  # type: ignore[assignment]
        try:
            return diff(e, a)
        finally:
            _diff_json.same_json = fast_json

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
