"""Where a kit run's time goes, from a sampling profiler (py-spy).

``py-spy record --gil --format raw`` writes one line per distinct stack: the frames
from outermost to innermost, ``;``-separated, each ``function (file:line)``, then a
space and the number of samples. ``--gil`` keeps only the thread holding the GIL, so
every sample is Python code running (the kit's worker thread included) and a thread
that is only waiting (for the plugin thread, for a lock) is never counted.

Unlike cProfile, sampling does not slow Python calls down unevenly, so the shares
can be read as shares of the run. Each sample is charged to exactly one category:

1. *plugin*: a frame of the plugin under test is on the stack (whatever it calls,
   the kit's public codec included, is the plugin's work);
2. *start-up*: before the test loop (interpreter, imports, configure, collection);
3. *generation*: inside Hypothesis' ``ConjectureData.draw`` — drawing an example,
   the kit's strategies included, for ``@given`` arguments and state-machine steps;
4. otherwise by the innermost frame that is not the standard library: Hypothesis'
   engine (choosing, mutating, recording examples), the kit's code (by layer),
   pytest and pluggy, imports during the run, or other.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["CATEGORIES", "Split", "categorize", "parse_raw", "split_samples"]

PLUGIN = "plugin under test"
STARTUP = "start-up: interpreter, imports, configure, collection"
GENERATION = "Hypothesis: drawing examples (generation)"
ENGINE = "Hypothesis: engine (choosing, mutating, recording examples)"
KIT_CORE = "kit: envelope core (validate, diff, encode, parse)"
KIT_PYTEST = "kit: pytest layer, guard thread, storage glue, reporting"
KIT_SUITES = "kit: suites (test bodies, fixed envelopes)"
PYTEST = "pytest + pluggy (per-test protocol, fixtures, reports)"
IMPORTS = "imports during the run"
OTHER = "other (stdlib outside the above; samples without a Python frame)"
CATEGORIES = (GENERATION, PLUGIN, ENGINE, KIT_CORE, KIT_PYTEST, KIT_SUITES, PYTEST,
              STARTUP, IMPORTS, OTHER)

_SUITE_PARTS = ("rdq_compliance/testing/_builders.py",)
_IN_RUN = frozenset({"pytest_runtestloop", "pytest_sessionfinish", "pytest_unconfigure"})
_FRAME = re.compile(r"^(?P<func>.*) \((?P<file>[^()]*?)(?::(?P<line>\d+))?\)$")


@dataclass(frozen=True)
class Frame:
    func: str
    file: str


def parse_raw(text: str) -> Iterator[tuple[tuple[Frame, ...], int]]:
    """Stacks (outermost first) and their sample counts from py-spy's raw format."""
    for line in text.splitlines():
        stack, _, count = line.rstrip().rpartition(" ")
        if not count.isdigit():
            continue
        frames = []
        for part in filter(None, stack.split(";")):
            m = _FRAME.match(part)
            if m:
                frames.append(Frame(m["func"], m["file"]))
        yield tuple(frames), int(count)


def _owner(file: str, plugin_modules: tuple[str, ...]) -> str | None:
    """The category of a frame's file, or None for the standard library."""
    path = file.replace("\\", "/")
    if any(f"{m}/" in path or path.startswith(f"{m}.") or f"/{m}.py" in path
           for m in plugin_modules):
        return PLUGIN
    if "rdq_compliance/" in path:
        if "/envelope/" in path:
            return KIT_CORE
        # The fixed envelopes the suites build (testing/_builders.py, once suites/_support)
        # are the suites' own work; the rest of the testing API (the handle, namespaces,
        # the guard and runtime, once _pytest/) is the kit's layer around the plugin.
        if "/suites/" in path or "/strategies/" in path or path.endswith(_SUITE_PARTS):
            return KIT_SUITES
        return KIT_PYTEST
    if path.startswith("hypothesis/") or "/hypothesis/" in path:
        return ENGINE
    if path.startswith(("_pytest/", "pluggy/", "pytest/", "xdist/", "execnet/")) or any(
            f"/{p}/" in path for p in ("_pytest", "pluggy", "pytest", "xdist", "execnet")):
        return PYTEST
    return None


def categorize(frames: tuple[Frame, ...], plugin_modules: tuple[str, ...]) -> str:
    if not frames:
        return OTHER  # no Python frame: the interpreter's own start-up, shutdown or C code
    owners = [_owner(f.file, plugin_modules) for f in frames]
    if PLUGIN in owners:
        return PLUGIN
    funcs = [f.func for f in frames]
    # The kit's worker thread starts at Thread._bootstrap, never in the main loop.
    if not any(f in _IN_RUN or f.endswith("._bootstrap") for f in funcs):
        return STARTUP
    if any(f.func == "ConjectureData.draw" for f in frames):
        return GENERATION
    if any(f.startswith("_find_and_load") for f in funcs):
        return IMPORTS
    return next((o for o in reversed(owners) if o is not None), OTHER)


@dataclass
class Split:
    samples: Counter[str] = field(default_factory=Counter)
    kit_functions: Counter[str] = field(default_factory=Counter)  # inclusive samples

    @property
    def total(self) -> int:
        return sum(self.samples.values())


_KIT_CATEGORIES = frozenset({KIT_CORE, KIT_PYTEST, KIT_SUITES})


def split_samples(stacks: Iterable[tuple[tuple[Frame, ...], int]],
                  plugin_modules: tuple[str, ...]) -> Split:
    """Charge every sample to one category; count the kit's functions inclusively
    over the samples charged to the kit's own code."""
    out = Split()
    for frames, count in stacks:
        cat = categorize(frames, plugin_modules)
        out.samples[cat] += count
        if cat in _KIT_CATEGORIES:
            seen = set()
            for f in frames:
                if "rdq_compliance/" in f.file and "/suites/test_" not in f.file:
                    name = f"{f.file.split('rdq_compliance/', 1)[1]} {f.func}"
                    if name not in seen:
                        seen.add(name)
                        out.kit_functions[name] += count
    return out


def split_file(path: Path, plugin_modules: tuple[str, ...]) -> Split:
    return split_samples(parse_raw(path.read_text("utf-8", "replace")), plugin_modules)
