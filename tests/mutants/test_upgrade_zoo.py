"""Upgrades across plugin releases (C19, issue 16): two real kit runs per case.

``--rdq-upgrade-save DIR`` with release 1.0.0 (sqlite ``layout=1``, testee ``--layout 1``),
then ``--rdq-upgrade-check DIR`` with release 2.0.0 (``layout=2``, ``--layout 2
--migration NAME``), which migrates the store when it opens it. The correct migration is
compliant over the whole kit; each lossy migration of ``tests/mutants/upgrade_zoo.py``
is non-compliant with its requirement failed, the lost field or the resurrected
namespace named, and a non-zero exit status — as a Python plugin and as a testee.
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest

from rdq_compliance._requirements import REQUIREMENTS, Level

from ._entries import TESTEE
from ._harness import KitResult, run_kit
from .upgrade_zoo import UPGRADE_ENTRIES, UpgradeEntry

pytestmark = pytest.mark.zoo

UP_IDS = ("RDQ-UP-001", "RDQ-UP-002", "RDQ-UP-003")
MUTANTS = [e for e in UPGRADE_ENTRIES if e.catches]
CORRECT = [e for e in UPGRADE_ENTRIES if not e.catches]
VIAS = ("python", "testee")


def _testee(*args: str) -> str:
    return shlex.join([sys.executable, str(TESTEE), *args])


def _release(entry: UpgradeEntry, via: str, tmp: Path, layout: int) -> tuple[str, list[str]]:
    """(plugin label, kit arguments) of release ``layout`` of ``entry``."""
    if via == "python":
        label = f"tests.mutants.upgrade_zoo:{entry.id}"
        return label, [f"--rdq-plugin={label}", f"--rdq-option=path={tmp / 'store.db'}",
                       f"--rdq-option=layout={layout}"]
    args = ["--layout", str(layout)]
    if layout == 2:
        args += ["--migration", entry.migration]
    return "stdio", ["--rdq-plugin=stdio", f"--rdq-testee={_testee(*args)}"]


def _upgrade(entry: UpgradeEntry, via: str, tmp: Path, *, focus: bool
             ) -> tuple[KitResult, KitResult, str]:
    directory = tmp / "upgrade"
    label, old = _release(entry, via, tmp, 1)
    only = {label: UP_IDS} if focus else None
    saved = run_kit(old, extra=[f"--rdq-upgrade-save={directory}"], focus=only, timeout=600)
    assert saved.returncode == 0, saved.describe()
    assert (directory / "manifest.json").is_file(), saved.describe()
    _, new = _release(entry, via, tmp, 2)
    checked = run_kit(new, extra=[f"--rdq-upgrade-check={directory}"], focus=only,
                      timeout=600)
    return saved, checked, label


@pytest.mark.parametrize("via", VIAS)
@pytest.mark.parametrize("entry", CORRECT, ids=[e.id for e in CORRECT])
def test_correct_migration_is_compliant(tmp_path: Path, entry: UpgradeEntry, via: str) -> None:
    """The whole kit, both runs: release 1.0.0 is compliant with the upgrade requirements
    not applicable (never incomplete), release 2.0.0 after its migration is compliant
    with RDQ-UP-001..003 passed, and the report and badge name the release upgraded from."""
    saved, checked, label = _upgrade(entry, via, tmp_path, focus=False)
    assert saved.verdict(label) == "compliant", saved.describe()
    assert {saved.statuses(label)[i] for i in UP_IDS} == {"not-applicable"}
    assert checked.returncode == 0, checked.describe()
    assert checked.verdict(label) == "compliant", checked.describe()
    assert {checked.statuses(label)[i] for i in UP_IDS} == {"passed"}
    assert checked.report is not None
    assert checked.report["upgraded_from"].endswith(" 1.0.0"), checked.report["notes"]
    assert (tmp_path / "upgrade" / "checked.json").is_file()


@pytest.mark.parametrize("via", VIAS)
@pytest.mark.parametrize("entry", MUTANTS, ids=[e.id for e in MUTANTS])
def test_lossy_migration_is_caught(tmp_path: Path, entry: UpgradeEntry, via: str) -> None:
    _, checked, label = _upgrade(entry, via, tmp_path, focus=True)
    assert checked.returncode not in (0, None), checked.describe()
    assert checked.verdict(label) == "non-compliant", (
        f"MISSED DEFECT {entry.id} ({via}): {entry.defect}\n{checked.describe()}")
    missing = set(entry.catches) - checked.failed(label)
    assert not missing, f"{entry.id} ({via}) not caught by {missing}\n{checked.describe()}"
    messages = "\n".join(checked.messages(label))
    assert entry.shows in messages, (
        f"{entry.id} ({via}): no failure message names {entry.shows!r}:\n{messages[:3000]}")


def test_every_upgrade_requirement_has_a_mutant() -> None:
    """The zoo's MUST rule for the two-run requirements (test_zoo cannot run them)."""
    musts = {r.id for r in REQUIREMENTS if r.suite == "upgrade" and r.level is Level.MUST}
    declared = {rid for e in MUTANTS for rid in e.catches}
    assert musts == set(UP_IDS) and not musts - declared, musts - declared


@pytest.mark.parametrize(("label", "why"), [
    ("tests.mutants.zoo:ok_not_durable", "declares no 'durable' capability"),
    ("tests.mutants.zoo:drop_unknown_top", "does not read back its own write"),
])
def test_a_save_that_cannot_be_trusted_fails(tmp_path: Path, label: str, why: str) -> None:
    """No manifest from a plugin without `durable`, or from a release that already loses
    data: the check would blame the migration for it."""
    directory = tmp_path / "upgrade"
    res = run_kit([f"--rdq-plugin={label}"], extra=[f"--rdq-upgrade-save={directory}"],
                  focus={label: ["RDQ-UP-001"]}, timeout=300)
    assert res.returncode == 1, res.describe()
    assert "upgrade save FAILED: " in res.output and why in res.output, res.describe()
    assert not (directory / "manifest.json").exists()
    assert res.report is not None and any(why in n for n in res.report["notes"])


# -- usage errors: one line, exit status 4, no traceback -------------------------------------

def _usage(args: list[str]) -> str:
    res = run_kit(args, timeout=120)
    assert res.returncode == 4, res.describe()
    errors = [line for line in res.output.splitlines() if line.startswith("ERROR:")]
    assert len(errors) == 1 and "Traceback" not in res.output, res.describe()
    return errors[0]


UP_CORRECT = "tests.mutants.upgrade_zoo:up_correct"


def _sqlite(tmp: Path, layout: int = 2) -> list[str]:
    return [f"--rdq-plugin={UP_CORRECT}",
            f"--rdq-option=path={tmp / 'store.db'}", f"--rdq-option=layout={layout}"]


def test_usage_errors(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"
    assert "no such directory" in _usage([*_sqlite(tmp_path),
                                          f"--rdq-upgrade-check={missing}"])
    # the ini twin (-o sets an ini value)
    assert "no such directory" in _usage([*_sqlite(tmp_path), "-o",
                                          f"rdq_upgrade_check={missing}"])
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("x")
    assert "no manifest.json" in _usage([*_sqlite(tmp_path), f"--rdq-upgrade-check={foreign}"])
    assert "holds other files" in _usage([*_sqlite(tmp_path),
                                          f"--rdq-upgrade-save={foreign}"])
    assert "both given" in _usage([*_sqlite(tmp_path), f"--rdq-upgrade-save={foreign}",
                                   f"--rdq-upgrade-check={foreign}"])
    # a store per process: the controller's save would be read from the workers' stores
    per_worker = [f"--rdq-plugin={UP_CORRECT}", f"--rdq-option=path={tmp_path}/s-{{worker}}.db"]
    line = _usage([*per_worker, f"--rdq-upgrade-save={tmp_path / 'fresh'}"])
    assert "option path of plugin" in line and "names {worker}" in line, line

    directory = tmp_path / "up"
    saved = run_kit([*_sqlite(tmp_path, 1), f"--rdq-upgrade-save={directory}"],
                    focus={"tests.mutants.upgrade_zoo:up_correct": UP_IDS}, timeout=300)
    assert saved.returncode == 0, saved.describe()
    manifest = directory / "manifest.json"
    original = manifest.read_text(encoding="utf-8")

    other = "--rdq-plugin=tests.mutants.zoo:ok_base"
    line = _usage([other, f"--rdq-upgrade-check={directory}"])
    assert "name='sqlite'" in line and "same plugin" in line, line

    data = json.loads(original)
    data["kit_version"] = "0.0.1"
    manifest.write_text(json.dumps(data), encoding="utf-8")
    line = _usage([*_sqlite(tmp_path), f"--rdq-upgrade-check={directory}"])
    assert "'0.0.1'" in line and "same kit version" in line, line

    data = json.loads(original)
    data["fixture_hash"] = "sha256:0"
    manifest.write_text(json.dumps(data), encoding="utf-8")
    assert "other golden fixtures" in _usage([*_sqlite(tmp_path),
                                              f"--rdq-upgrade-check={directory}"])

    data = json.loads(original)
    first = next(iter(data["expected"]["golden"]))
    data["expected"]["golden"][first] = data["expected"]["golden"][first].replace(
        '"queue":"', '"queue":"x', 1)
    manifest.write_text(json.dumps(data), encoding="utf-8")
    assert "changed after the save" in _usage([*_sqlite(tmp_path),
                                               f"--rdq-upgrade-check={directory}"])
    manifest.write_text(original, encoding="utf-8")

    two = [*_sqlite(tmp_path), "--rdq-plugin=tests.mutants.zoo:ok_base"]
    assert "exactly one --rdq-plugin" in _usage([*two, f"--rdq-upgrade-check={directory}"])
