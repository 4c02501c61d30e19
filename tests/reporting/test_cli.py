"""``rdq-compliance verify | badge | known-failures``: outputs and exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

from rdq_compliance._cli import main
from rdq_compliance.reporting import TestStatus, parse_known_failures, write_json

from ._synth import UNGATED_MUST, meta, passing, report_for


@pytest.fixture
def report_file(tmp_path):
    r = report_for([meta()], passing(override={UNGATED_MUST.id: TestStatus.FAILED}))
    path = tmp_path / "report.json"
    write_json(path, r)
    return path


def tamper(path):
    data = json.loads(path.read_text())
    data["verdict"] = "compliant"
    path.write_text(json.dumps(data))


def test_verify_ok(report_file, capsys):
    assert main(["verify", str(report_file)]) == 0
    assert "ok, sha256:" in capsys.readouterr().out


def test_verify_tampered(report_file, capsys):
    tamper(report_file)
    assert main(["verify", str(report_file)]) == 1
    err = capsys.readouterr().err
    assert "digest mismatch" in err and "Traceback" not in err


def test_verify_unreadable(tmp_path, capsys):
    assert main(["verify", str(tmp_path / "missing.json")]) == 2
    (tmp_path / "junk.json").write_bytes(b"\xff\xfe not json")
    assert main(["verify", str(tmp_path / "junk.json")]) == 2
    (tmp_path / "other.json").write_text('{"hello": 1}')
    assert main(["verify", str(tmp_path / "other.json")]) == 1
    assert "Traceback" not in capsys.readouterr().err


def test_badge(report_file, tmp_path):
    out = tmp_path / "badge.svg"
    assert main(["badge", str(report_file), "-o", str(out)]) == 0
    texts = ["".join(t.itertext()) for t in ET.parse(out).getroot().iter(
        "{http://www.w3.org/2000/svg}text")]
    assert texts[-1] == "non-compliant · quick profile"  # the synthetic run is quick
    ep = tmp_path / "ep.json"
    assert main(["badge", str(report_file), "--endpoint", "-o", str(ep)]) == 0
    assert json.loads(ep.read_text())["color"] == "red"


def test_badge_refuses_a_tampered_report(report_file, tmp_path):
    tamper(report_file)
    out = tmp_path / "badge.svg"
    assert main(["badge", str(report_file), "-o", str(out)]) == 1
    assert not out.exists()


def test_badge_unwritable_output(report_file, tmp_path):
    assert main(["badge", str(report_file), "-o", str(tmp_path / "no" / "dir.svg")]) == 2


def test_known_failures(report_file, tmp_path):
    out = tmp_path / "known.txt"
    assert main(["known-failures", str(report_file), "-o", str(out)]) == 0
    assert parse_known_failures(out.read_text()).keys() == {(None, UNGATED_MUST.id)}
    tamper(report_file)
    assert main(["known-failures", str(report_file), "-o", str(out)]) == 1


def test_usage_error_exit_code(capsys):
    with pytest.raises(SystemExit) as e:
        main(["badge"])
    assert e.value.code == 2


def test_console_script_subprocess(report_file):
    r = subprocess.run([sys.executable, "-m", "rdq_compliance", "verify", str(report_file)],
                       capture_output=True, text=True, check=False)
    assert r.returncode == 0, r.stderr


# -- issue 14 §5, §6: several reports, the requirement list, ordinary file modes --------------


def test_verify_takes_several_reports(report_file, tmp_path, capsys):
    other = tmp_path / "other.json"
    write_json(other, json.loads(report_file.read_text()))
    assert main(["verify", str(report_file), str(other)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in out] == [str(report_file), str(other)]
    tamper(other)
    missing = tmp_path / "missing.json"
    assert main(["verify", str(report_file), str(other)]) == 1  # one changed: 1
    assert main(["verify", str(other), str(missing), str(report_file)]) == 2  # worst wins
    captured = capsys.readouterr()
    assert f"{report_file}: ok" in captured.out  # every report still checked and reported
    assert str(missing) in captured.err and str(other) in captured.err


def test_requirements_table_and_json(capsys):
    from rdq_compliance._requirements import REQUIREMENTS

    live = [r for r in REQUIREMENTS if not r.retired]
    assert main(["requirements"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["id", "level", "clauses", "capability", "title"]
    rt003 = next(line for line in lines if line.startswith("RDQ-RT-003 "))
    assert rt003.split()[1:4] == ["MUST", "C15", "durable"]
    assert sum(line.startswith("RDQ-") for line in lines) == len(live)
    assert main(["requirements", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["id"] for r in rows] == [r.id for r in live]
    assert rows[0].keys() >= {"id", "level", "title", "clauses", "capability", "clause_links"}
    assert rows[0]["clause_links"][0] == "docs/spec/clarifications.md#c3"


def test_json_files_get_the_usual_mode(tmp_path):
    """0644 under umask 022, like the badge and the summary (mkstemp gave 0600)."""
    import os
    import stat

    old = os.umask(0o022)
    try:
        write_json(tmp_path / "r.json", {"a": 1})
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "r.json").stat().st_mode) == 0o644
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]  # no temporary file left
