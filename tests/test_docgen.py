"""docs/requirements.md is generated from the registry and kept current."""

from __future__ import annotations

from rdq_compliance import _docgen
from rdq_compliance._requirements import REQUIREMENTS


def test_docs_requirements_md_is_current():
    assert _docgen.main(["--check"]) == 0, (
        "docs/requirements.md is stale: run python -m rdq_compliance._docgen")


def test_render_lists_every_requirement():
    text = _docgen.render()
    for r in REQUIREMENTS:
        row = next(line for line in text.splitlines() if line.startswith(f"| {r.id} |"))
        assert f"| {r.level.value} |" in row and r.suite in row
        assert (r.capability or "") in row


def test_check_detects_a_stale_file(tmp_path, capsys):
    stale = tmp_path / "requirements.md"
    stale.write_text(_docgen.render().replace("RDQ-RT-001", "RDQ-RT-999"))
    assert _docgen.main(["--check", "--output", str(stale)]) == 1
    assert "out of date" in capsys.readouterr().err
    assert _docgen.main(["--output", str(stale)]) == 0
    assert _docgen.main(["--check", "--output", str(stale)]) == 0
