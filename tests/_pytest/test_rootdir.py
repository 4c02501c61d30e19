"""_pytest/_rootdir.py: a kit option's value never picks pytest's rootdir or configuration."""

from __future__ import annotations

import json

import pytest

from tests._pytest._standin import run

ONE = ("-k", "test_missing_id_reads_as_nothing")
STRAY = "rdq: pytest took the value of --rdq-known-failures for a path to test"


def _elsewhere(kit: pytest.Pytester, config_name: str, body: str) -> str:
    """A folder outside the run's with a pytest configuration and a known-failures file."""
    folder = kit.path / "elsewhere"
    folder.mkdir()
    (folder / config_name).write_text(body)
    (folder / "known-failures.txt").write_text("# nothing known\n")
    return str(folder / "known-failures.txt")


@pytest.mark.parametrize(("config_name", "body"), [
    ("pytest.ini", "[pytest]\naddopts = --rdq-seed=7\nrdq_report = stray.json\n"),
    ("pyproject.toml",
     "[tool.pytest.ini_options]\naddopts = ['--rdq-seed=7']\nrdq_report = 'stray.json'\n"),
    ("tox.ini", "[pytest]\naddopts = --rdq-seed=7\nrdq_report = stray.json\n"),
])
def test_a_config_beside_the_known_failures_file_does_not_change_the_run(
        kit: pytest.Pytester, config_name: str, body: str) -> None:
    """Issue 23: `--rdq-known-failures "$GITHUB_WORKSPACE/known-failures.txt"` (a separate
    argument, an existing file) made pytest root the run there and apply its config."""
    known = _elsewhere(kit, config_name, body)
    result = run(kit, "--rdq-plugin=fake", "--rdq-known-failures", known, *ONE,
                 "--rdq-report", "r.json")
    assert result.ret == pytest.ExitCode.TESTS_FAILED  # -k: incomplete, nothing failed
    out = result.stdout.str()
    assert f"rootdir: {kit.path}" in out, out
    assert json.loads((kit.path / "r.json").read_text())["seed"] == 0  # not the stray addopts
    assert not (kit.path / "elsewhere/stray.json").exists()  # nor its ini values
    stray = [line for line in result.stdout.lines if line.startswith("rdq: ")]
    assert len(stray) == 1 and stray[0].startswith(STRAY), stray
    assert f"chose rootdir {str(kit.path / 'elsewhere')!r}" in stray[0]
    assert f"uses rootdir {str(kit.path)!r}" in stray[0]


def test_the_right_configuration_is_kept_with_its_addopts(kit: pytest.Pytester) -> None:
    """The run's own configuration (in the current folder) is what pytest should have
    used: after the switch its addopts and ini values apply, not the stray ones."""
    known = _elsewhere(kit, "pytest.ini", "[pytest]\naddopts = --rdq-seed=7\n")
    kit.makeini("[pytest]\naddopts = --rdq-seed=5\n")
    result = run(kit, "--rdq-plugin=fake", "--rdq-known-failures", known, *ONE,
                 "--rdq-report", "r.json")
    assert json.loads((kit.path / "r.json").read_text())["seed"] == 5, result.stdout.str()
    assert "configfile: tox.ini" in result.stdout.str()  # pytester.makeini writes tox.ini
    assert any(line.startswith(STRAY) for line in result.stdout.lines)


def test_the_equals_form_and_a_run_without_a_stray_config_say_nothing(
        kit: pytest.Pytester) -> None:
    known = _elsewhere(kit, "pytest.ini", "[pytest]\naddopts = --rdq-seed=7\n")
    result = run(kit, "--rdq-plugin=fake", f"--rdq-known-failures={known}", *ONE,
                 "--rdq-report", "r.json")
    assert json.loads((kit.path / "r.json").read_text())["seed"] == 0
    assert not any(line.startswith("rdq: ") for line in result.stdout.lines)
    (kit.path / "elsewhere/pytest.ini").unlink()
    result = run(kit, "--rdq-plugin=fake", "--rdq-known-failures", known, *ONE)
    assert not any(line.startswith("rdq: ") for line in result.stdout.lines)
