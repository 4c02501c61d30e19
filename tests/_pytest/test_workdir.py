"""_pytest/_workdir.py: where Hypothesis keeps its files during a kit run."""

from __future__ import annotations

import os
from pathlib import Path

from rdq_compliance._pytest._workdir import HYPOTHESIS_ENV, keep_hypothesis_out


def test_hypothesis_home_leaves_an_existing_folder_and_the_environment_alone(
        tmp_path: Path, monkeypatch):
    """CI conventions (issue 14 §6): Hypothesis's files go to the user's cache unless the
    folder already has a .hypothesis or HYPOTHESIS_STORAGE_DIRECTORY says where."""
    monkeypatch.delenv(HYPOTHESIS_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    undo = keep_hypothesis_out(tmp_path)
    assert os.environ[HYPOTHESIS_ENV] == str(tmp_path / "cache/rdq-compliance/hypothesis")
    undo()
    assert HYPOTHESIS_ENV not in os.environ
    (tmp_path / ".hypothesis").mkdir()
    keep_hypothesis_out(tmp_path)()
    assert HYPOTHESIS_ENV not in os.environ
    monkeypatch.setenv(HYPOTHESIS_ENV, "/elsewhere")
    keep_hypothesis_out(tmp_path / "x")()
    assert os.environ[HYPOTHESIS_ENV] == "/elsewhere"
