"""Narrow examples (``@requirement(..., narrow=True)``, issue 21 §2): each judges only
its own requirement's differences and runs first, and RDQ-RT-001 judges the same
envelopes whole (``suites/_first_looks``). Real kit runs on the zoo's defects that
every envelope carries: each fails its own narrow example and passes the others, and
the whole-envelope twin fails for all of them (nothing a narrow example leaves aside
goes unjudged)."""

from __future__ import annotations

import pytest

from rdq_compliance.suites._first_looks import FIRST_LOOKS

from ._harness import run_kit
from .zoo import by_id

pytestmark = [pytest.mark.zoo]

NARROW = {
    "exact-form": "test_plain_envelope_comes_back_in_exact_form",
    "version": "test_version_one_is_kept",
    "dotted-keys": "test_dotted_header_keys_come_back",
}
TWIN = "test_first_looks_roundtrip_whole"


def _short(nodeid: str, label: str) -> str:
    """``test_x[label-case]`` -> ``test_x[case]``, ``test_x[label]`` -> ``test_x``."""
    name = nodeid.split("::")[-1]
    return name.replace(f"[{label}]", "").replace(f"[{label}-", "[")


_ALL = tuple(FIRST_LOOKS)


@pytest.mark.parametrize(("mutant", "fails", "changed"), [
    # instants: none of the narrow examples judges them; every envelope holds them
    ("local_tz_shift", None, _ALL),
    ("version_stamped_on_read", "version", _ALL),
    ("mongodb_dotted_keys", "dotted-keys", ("dotted-keys",)),
    ("t_b64_url", "exact-form", ("exact-form",)),  # '+' and '/' in base64: that payload
])
def test_a_narrow_example_fails_only_on_its_own_requirement(
    mutant: str, fails: str | None, changed: tuple[str, ...]
) -> None:
    entry = by_id(mutant)
    result = run_kit([f"--rdq-plugin={entry.label}"],
                     extra=("-k", " or ".join([*NARROW.values(), TWIN])))
    plugin = result.plugin(entry.label)
    outcome = {_short(t["nodeid"], entry.label): t["status"]
               for r in plugin["requirements"] for t in r["tests"]}
    for name, test in NARROW.items():
        want = "failed" if name == fails else "passed"
        assert outcome.get(test) == want, (name, outcome, result.describe())
    for name in FIRST_LOOKS:
        # the twin judges every difference of the envelopes the store changes
        want = "failed" if name in changed else "passed"
        assert outcome.get(f"{TWIN}[{name}]") == want, (name, outcome, result.describe())
    assert result.returncode == 1, result.describe()
