"""The exit status follows the verdict (issue 12 §1), end to end.

Each case is a real kit run in a subprocess, as a CI job runs it: compliant exits 0,
non-compliant 1 (0 when every failure is a listed known failure), incomplete 1 with a
final ``INCOMPLETE:`` line saying what was not tested and why (0 with
``--rdq-allow-incomplete``), a usage error 4; the report, badge and summary are
written in every case, and a plugin or testee that cannot start gives one message,
never one traceback per test.
"""

from __future__ import annotations

import shlex
import shutil
import sys
import xml.etree.ElementTree as ET

import pytest

from rdq_compliance._cli import main as cli
from tests._pytest.test_reporting_end_to_end import STANDIN
from tests.reporting._synth import validate_schema

OUTPUTS = ("--rdq-report", "out/report.json", "--rdq-badge", "out/badge.svg",
           "--rdq-summary", "out/summary.md")
GREY = "#9f9f9f"


@pytest.fixture
def kit(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makepyfile(standin=STANDIN)
    pytester.syspathinsert()
    return pytester


def run(pytester: pytest.Pytester, *args: str) -> tuple[pytest.RunResult, dict]:
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--rdq-profile=quick",
                                           *OUTPUTS, *args)
    import json

    report = json.loads((pytester.path / "out/report.json").read_text(encoding="utf-8"))
    validate_schema(report)
    assert cli(["verify", str(pytester.path / "out/report.json")]) == 0
    assert (pytester.path / "out/summary.md").read_text(encoding="utf-8")
    return result, report


def badge(pytester: pytest.Pytester) -> tuple[str, str]:
    """The badge's verdict text and the colour of its right half."""
    root = ET.parse(pytester.path / "out/badge.svg").getroot()
    ns = "{http://www.w3.org/2000/svg}"
    text = ["".join(t.itertext()) for t in root.iter(f"{ns}text")][-1]
    fills = [r.get("fill") for r in root.iter(f"{ns}rect") if r.get("fill", "").startswith("#")]
    return text, fills[-1] if fills else ""


def final_line(result: pytest.RunResult) -> str:
    lines = [ln for ln in result.stdout.lines if ln.startswith("INCOMPLETE: ")]
    assert len(lines) == 1, result.stdout.str()[-3000:]
    return lines[0]


def assert_incomplete(pytester: pytest.Pytester, result: pytest.RunResult, report: dict,
                      *fragments: str) -> None:
    assert result.ret == pytest.ExitCode.TESTS_FAILED, result.stdout.str()[-3000:]
    assert report["verdict"] == "incomplete"
    line = final_line(result)
    assert "--rdq-allow-incomplete" in line
    for fragment in fragments:
        assert fragment in line, line
    assert badge(pytester) == ("incomplete · quick profile", GREY)  # run() is quick
    assert "INTERNALERROR" not in result.stdout.str()


# Compliant exits 0, with no INCOMPLETE line and report, badge and summary written:
# test_reporting_end_to_end.test_correct_plugin_is_compliant, on the same run of
# standin:good (one full kit run for both, issue 25 §5).


def test_unreachable_server_is_incomplete_and_fails(kit: pytest.Pytester) -> None:
    pytest.importorskip("psycopg")
    dsn = "postgresql://postgres@127.0.0.1:1/test"
    result, report = run(kit, "--rdq-plugin=postgres", "--rdq-option", f"dsn={dsn}")
    assert_incomplete(kit, result, report, "of plugin 'postgres' not tested",
                      "PostgreSQL at 127.0.0.1:1", "--rdq-option postgres.dsn=VALUE")
    assert report["plugins"][0]["unavailable"]
    # A laptop without the server: the user accepts the partial run explicitly.
    result, report = run(kit, "--rdq-plugin=postgres", "--rdq-option", f"dsn={dsn}",
                         "--rdq-allow-incomplete")
    assert result.ret == 0 and report["verdict"] == "incomplete"
    assert "exit status 0 (--rdq-allow-incomplete" in final_line(result)


def _testee_cannot_start(kit: pytest.Pytester, command: str, *fragments: str) -> None:
    result, report = run(kit, "--rdq-plugin=stdio", "--rdq-testee", command)
    assert_incomplete(kit, result, report, "cannot start the testee",
                      "(change --rdq-testee CMD, or RDQ_TESTEE)", *fragments)
    out = result.stdout.str()
    # One message for the run: the skip reason is not repeated as a failure per test.
    assert "FAILED" not in out and result.parseoutcomes().get("failed") is None
    assert out.count("Traceback (most recent call last)") <= 1


def test_testee_with_a_syntax_error(kit: pytest.Pytester) -> None:
    kit.makefile(".py", broken="import sys\n\ndef main(:\n    pass\n")
    _testee_cannot_start(kit, shlex.join([sys.executable, str(kit.path / "broken.py")]),
                         "SyntaxError", "broken.py")


def test_testee_executable_missing(kit: pytest.Pytester) -> None:
    _testee_cannot_start(kit, "rdq-no-such-testee --flag", "executable 'rdq-no-such-testee' "
                         "not found")


def test_node_testee_started_from_the_wrong_folder(kit: pytest.Pytester) -> None:
    node = shutil.which("node")
    if node is None:
        pytest.skip("Node.js is not installed")
    # The README's relative command, run from a folder that does not hold it.
    _testee_cannot_start(kit, f"{node} plugins_example/node/testee.js",
                         "Cannot find module")


def test_deselected_must_requirement_is_incomplete(kit: pytest.Pytester) -> None:
    result, report = run(kit, "--rdq-plugin=standin:good", "-k", "golden")
    assert_incomplete(kit, result, report, "of plugin 'standin:good' not tested",
                      "deselected: its tests were left out by -k")
    result, report = run(kit, "--rdq-plugin=standin:good", "-k", "golden",
                         "--rdq-allow-incomplete")
    assert result.ret == 0 and report["verdict"] == "incomplete"


def test_known_failures(kit: pytest.Pytester) -> None:
    result, report = run(kit, "--rdq-plugin=standin:lossy")
    assert result.ret == 1 and report["verdict"] == "non-compliant"
    assert badge(kit)[0] == "non-compliant · quick profile"
    assert cli(["known-failures", str(kit.path / "out/report.json"), "-o",
                str(kit.path / "known.txt")]) == 0
    # Every failure listed and everything else tested: exit 0, the verdict unchanged.
    result, report = run(kit, "--rdq-plugin=standin:lossy", "--rdq-known-failures", "known.txt")
    assert result.ret == 0, result.stdout.str()[-3000:]
    assert report["verdict"] == "non-compliant"
    # Known failures excuse failures, never what was not tested.
    result, report = run(kit, "--rdq-plugin=standin:lossy", "--rdq-known-failures", "known.txt",
                         "-k", "unknown_fields")
    assert result.ret == 1 and report["verdict"] == "non-compliant"
    assert "deselected: its tests were left out by -k" in final_line(result)


def test_usage_error_still_writes_the_report(kit: pytest.Pytester) -> None:
    result, report = run(kit, "--rdq-plugin=standin:good", "--rdq-profile=bogus")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert report["verdict"] == "incomplete"
    assert report["aborted"].startswith("usage error: --rdq-profile='bogus' is not a profile")
    assert badge(kit) == ("incomplete · bogus profile", GREY)  # the profile asked for
