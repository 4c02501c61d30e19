"""The pytest glue (reporting_plugin) driven by a stand-in kit.

The stand-in does what the kit does for reporting: it stashes a KitRun, tags each
test with the rdq_* user properties at collection, skips capability-gated tests,
and calls reporting_plugin.configure. So these tests run whatever state the real
kit is in; test_reporting_end_to_end.py repeats the key cases with the real kit.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from rdq_compliance._requirements import REQUIREMENTS
from tests.reporting._synth import validate_schema

CONFTEST = '''
import os
from datetime import UTC, datetime

import pytest

# both through the package, so that they stay one consistent pair across the in-process
# runs of pytester (which drops modules imported by a run but not package attributes)
from rdq_compliance._pytest import _state, reporting_plugin
from rdq_compliance._requirements import get_requirement
from rdq_compliance import StorageInfo

LABEL = os.environ.get("FAKE_LABEL", "fake")


def pytest_configure(config):
    if os.environ.get("FAKE_UNAVAILABLE"):
        plugin = _state.PluginUnderTest(LABEL, None, os.environ["FAKE_UNAVAILABLE"])
    else:
        caps = {c for c in os.environ.get("FAKE_CAPS", "").split(",") if c}
        info = StorageInfo(os.environ.get("FAKE_NAME", "fake"), "1.2", frozenset({1}),
                           frozenset(caps))
        plugin = _state.PluginUnderTest(LABEL, info)
    config.stash[_state.RUN_KEY] = _state.KitRun(
        plugins=[plugin], profile="quick", seed=7, timeout=10.0,
        started_at=datetime.now(UTC), kit_version="0.1.0",
        fixture_hash="sha256:" + "ab" * 32)
    if os.environ.get("COUNT_WRITES"):
        # where the report format units get it from when they write (formats/report.py)
        from rdq_compliance.reporting import _report

        real = _report.write_json

        def counting(path, value):
            with open(os.environ["COUNT_WRITES"], "a") as f:
                f.write(f"{os.getpid()} {path}\\n")
            real(path, value)

        _report.write_json = counting
    reporting_plugin.configure(config)


def pytest_collection_modifyitems(items):
    for item in items:
        rid = getattr(item, "callspec", None) and item.callspec.params.get("rid")
        if rid:
            req = get_requirement(rid)
            item.user_properties += [("rdq_requirement", rid), ("rdq_level", req.level.value),
                                     ("rdq_clauses", " ".join(req.clauses)),
                                     ("rdq_plugin", LABEL)]
'''

TESTS = '''
import os

import pytest

from rdq_compliance._pytest import _state
from rdq_compliance._requirements import REQUIREMENTS

FAIL = set(os.environ.get("FAIL", "").split(","))
ERROR = set(os.environ.get("ERROR", "").split(","))
SKIP = set(os.environ.get("SKIP", "").split(","))
INTERRUPT = os.environ.get("INTERRUPT", "")


@pytest.fixture
def storage(request, rid):
    if rid in ERROR:
        raise RuntimeError(f"cannot open namespace for {rid}")
    kit = request.config.stash[_state.RUN_KEY]
    plugin = kit.plugins[0]
    if plugin.unavailable:
        pytest.skip(plugin.unavailable)
    return plugin


@pytest.mark.parametrize("rid", [r.id for r in REQUIREMENTS])
def test_requirement(rid, storage):
    req = next(r for r in REQUIREMENTS if r.id == rid)
    if req.capability and req.capability not in storage.info.capabilities:
        pytest.skip(f"plugin declares no {req.capability!r} capability")
    if rid == INTERRUPT:
        raise KeyboardInterrupt
    if rid in SKIP:
        pytest.skip("server does not support it")
    assert rid not in FAIL, os.environ.get("FAIL_MESSAGE", f"{rid} broke")
'''

LIVE = [r for r in REQUIREMENTS if not r.retired]
MUST = next(r.id for r in LIVE if r.level.value == "MUST" and not r.capability)
MUST2 = next(r.id for r in LIVE if r.level.value == "MUST" and not r.capability and r.id != MUST)
SHOULD = next(r.id for r in LIVE if r.level.value == "SHOULD")
GATED = next(r for r in LIVE if r.capability)
GATED_IDS = {r.id for r in LIVE if r.capability}


@pytest.fixture
def kit(pytester, monkeypatch):
    for var in ("FAIL", "ERROR", "SKIP", "INTERRUPT", "FAKE_CAPS", "FAKE_UNAVAILABLE",
                "FAKE_NAME", "FAKE_LABEL", "FAIL_MESSAGE", "COUNT_WRITES"):
        monkeypatch.delenv(var, raising=False)
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_fake=TESTS)
    return pytester


def run(pytester, *args, subprocess=False):
    base = ["-p", "no:cacheprovider", "--rdq-report", "out/report.json", "--rdq-badge",
            "out/badge.svg", "--rdq-badge-endpoint", "out/badge.json", "--rdq-summary",
            "out/summary.md", *args]
    result = (pytester.runpytest_subprocess if subprocess else pytester.runpytest)(*base)
    report = json.loads((pytester.path / "out/report.json").read_text())
    validate_schema(report)
    return result, report


def statuses(report):
    return {r["id"]: r["status"] for r in report["plugins"][0]["requirements"]}


def test_compliant_run_writes_everything(kit):
    result, report = run(kit)
    assert result.ret == 0
    assert report["verdict"] == "compliant"
    assert report["seed"] == 7 and report["profile"] == "quick"
    assert report["fixture_hash"] == "sha256:" + "ab" * 32
    assert report["plugins"][0]["name"] == "fake"
    st = statuses(report)
    assert st[GATED.id] == "not-applicable"
    assert {s for k, s in st.items() if k not in GATED_IDS} == {"passed"}
    badge = ET.parse(kit.path / "out/badge.svg").getroot()
    assert "compliant" in "".join(badge.itertext())
    assert json.loads((kit.path / "out/badge.json").read_text())["color"] == "brightgreen"
    assert "**compliant**" in (kit.path / "out/summary.md").read_text()
    result.stdout.fnmatch_lines(["*= rdq compliance =*", "verdict: COMPLIANT",
                                 "plugin fake (fake 1.2, envelope v1, capabilities: none): "
                                 "compliant", "  golden *1 passed, 0 failed, 0 skipped, 0 error",
                                 "report written: *report.json"])


def test_declared_capability_is_verified(kit, monkeypatch):
    monkeypatch.setenv("FAKE_CAPS", GATED.capability)
    _result, report = run(kit)
    assert report["verdict"] == "compliant"
    assert report["plugins"][0]["capabilities_verified"] == [GATED.capability]
    assert f"compliant · {GATED.capability}" in (kit.path / "out/badge.svg").read_text()


def test_failure_is_non_compliant_and_hostile_text_is_contained(kit, monkeypatch):
    hostile = "<script>alert(1)</script> \"&' \x1b[2J | ``` \n# injected"
    monkeypatch.setenv("FAIL", MUST)
    monkeypatch.setenv("FAIL_MESSAGE", hostile)
    monkeypatch.setenv("FAKE_NAME", hostile)
    monkeypatch.setenv("FAKE_LABEL", "<b>lbl</b>")
    result, report = run(kit)
    assert result.ret == 1
    assert report["verdict"] == "non-compliant"
    req = next(r for r in report["plugins"][0]["requirements"] if r["id"] == MUST)
    # the exception lines, not the test's source code that pytest prints before them
    assert req["first_failure"].startswith("AssertionError: <script>alert(1)</script>")
    assert "def test_requirement" not in req["first_failure"]
    ET.parse(kit.path / "out/badge.svg")
    assert "<script" not in (kit.path / "out/badge.svg").read_text()
    # our section of the terminal output (pytest's own failure report is pytest's business)
    lines = result.stdout.lines
    start = next(i for i, ln in enumerate(lines) if "= rdq compliance =" in ln)
    ours = lines[start:start + 12]
    assert any(ln.startswith("plugin <b>lbl</b> (<script>") for ln in ours)
    assert not any("\x1b" in ln for ln in ours)
    result.stdout.fnmatch_lines([f"  FAILED {MUST} MUST [[]*[]] *"])


def test_error_in_setup_is_non_compliant(kit, monkeypatch):
    monkeypatch.setenv("ERROR", MUST)
    _result, report = run(kit)
    assert statuses(report)[MUST] == "error" and report["verdict"] == "non-compliant"
    req = next(r for r in report["plugins"][0]["requirements"] if r["id"] == MUST)
    assert req["first_failure"] == (f"setup failed: RuntimeError: cannot open namespace for {MUST}")


def test_should_failure_fails_pytest_but_not_the_verdict(kit, monkeypatch):
    monkeypatch.setenv("FAIL", SHOULD)
    result, report = run(kit)
    assert result.ret == 1
    assert statuses(report)[SHOULD] == "failed" and report["verdict"] == "compliant"


def test_deselected_must_is_incomplete(kit):
    result, report = run(kit, "-k", f"not {MUST}")
    assert result.ret == 1  # issue 12 §1: incomplete fails the run unless allowed
    assert statuses(report)[MUST] == "not-run"
    assert report["verdict"] == "incomplete"
    result.stdout.fnmatch_lines(["verdict: INCOMPLETE", f"  NOT-RUN {MUST}: deselected: *",
                                 "INCOMPLETE: 1 MUST requirement of plugin 'fake' not tested: "
                                 "* -- exit status 1*"])
    assert "(deselected?)" not in result.stdout.str()
    assert "incomplete" in (kit.path / "out/badge.svg").read_text()


def test_skipped_must_is_incomplete(kit, monkeypatch):
    monkeypatch.setenv("SKIP", MUST)
    _, report = run(kit)
    req = next(r for r in report["plugins"][0]["requirements"] if r["id"] == MUST)
    assert req["status"] == "skipped" and req["reason"] == "server does not support it"
    assert report["verdict"] == "incomplete"


def test_unavailable_plugin_is_incomplete(kit, monkeypatch):
    monkeypatch.setenv("FAKE_UNAVAILABLE", "cannot connect to dsn='postgresql://x'")
    result, report = run(kit)
    assert result.ret == 1
    p = report["plugins"][0]
    assert p["unavailable"].startswith("cannot connect") and p["name"] is None
    assert report["verdict"] == "incomplete"
    assert set(statuses(report).values()) == {"skipped"}


def test_report_written_on_maxfail(kit, monkeypatch):
    monkeypatch.setenv("FAIL", MUST)
    result, report = run(kit, "-x")
    assert result.ret == 1
    assert report["verdict"] == "non-compliant"
    # said once, in words (not "the run stopped early: stopped: stopping after 1 failures")
    assert report["aborted"] == "after the first failure (-x)"
    result.stdout.fnmatch_lines(["the run stopped early: after the first failure (-x)"])
    assert "not-run" in statuses(report).values()


def test_report_written_on_interrupt(kit, monkeypatch):
    monkeypatch.setenv("INTERRUPT", MUST2)
    result, report = run(kit, subprocess=True)  # in-process pytester re-raises Ctrl-C
    assert result.ret == pytest.ExitCode.INTERRUPTED
    assert report["aborted"] == "interrupted (KeyboardInterrupt, e.g. Ctrl-C)"
    assert report["verdict"] == "incomplete"
    assert statuses(report)[MUST2] == "not-run"


def test_report_written_when_a_test_exits_the_session(kit):
    kit.makepyfile(test_zz_crash='''
import pytest
def test_crash():
    pytest.exit("testee crashed", returncode=3)
''')
    result, report = run(kit)
    assert result.ret == 3
    assert report["aborted"] == "stopped by pytest.exit(): testee crashed"


def test_xdist_report_written_once_with_all_results(kit, monkeypatch):
    log = kit.path / "writes.log"
    monkeypatch.setenv("COUNT_WRITES", str(log))
    monkeypatch.setenv("FAIL", MUST)
    result, report = run(kit, "-n", "2", subprocess=True)
    assert result.ret == 1
    writes = [ln for ln in log.read_text().splitlines() if ln.endswith("report.json")]
    assert len(writes) == 1, writes
    st = statuses(report)
    assert st[MUST] == "failed" and "not-run" not in st.values()
    assert report["verdict"] == "non-compliant"


def test_xdist_maxfail(kit, monkeypatch):
    monkeypatch.setenv("FAIL", MUST)
    _result, report = run(kit, "-n", "2", "-x", subprocess=True)
    assert report["verdict"] == "non-compliant"
    assert report["aborted"] == "after the first failure (-x)"


def test_junitxml_carries_requirement_properties(kit):
    run(kit, "--junitxml", "out/junit.xml")
    root = ET.parse(kit.path / "out/junit.xml").getroot()
    case = next(c for c in root.iter("testcase") if f"[{MUST}]" in c.get("name"))
    props = {p.get("name"): p.get("value") for p in case.iter("property")}
    req = next(r for r in LIVE if r.id == MUST)
    assert props["rdq_requirement"] == MUST
    assert props["rdq_clauses"] == " ".join(req.clauses)
    assert props["rdq_plugin"] == "fake"


class TestKnownFailures:
    def write(self, kit, text):
        (kit.path / "known.txt").write_text(text)
        return ("--rdq-known-failures", "known.txt")

    def test_listed_failure_exits_zero_but_stays_non_compliant(self, kit, monkeypatch):
        monkeypatch.setenv("FAIL", f"{MUST},{SHOULD}")
        monkeypatch.setenv("ERROR", MUST2)
        result, report = run(kit, *self.write(kit, f"{MUST}\nfake:{SHOULD}\n{MUST2}\n"))
        assert result.ret == 0
        assert report["verdict"] == "non-compliant"
        known = {r["id"] for r in report["plugins"][0]["requirements"] if r["known_failure"]}
        assert known == {MUST, SHOULD, MUST2}
        result.stdout.fnmatch_lines([f"known failure {MUST} [[]fake[]]: listed in *known.txt",
                                     "every failure is a known failure*exit status 0*"])

    def test_listed_failure_in_a_run_stopped_early_still_fails(self, kit, monkeypatch):
        monkeypatch.setenv("FAIL", MUST)
        result, report = run(kit, "-x", *self.write(kit, f"{MUST}\n"))
        assert report["aborted"] and result.ret == 1

    def test_unlisted_failure_fails(self, kit, monkeypatch):
        monkeypatch.setenv("FAIL", f"{MUST},{MUST2}")
        result, _ = run(kit, *self.write(kit, f"{MUST}\n"))
        assert result.ret == 1
        result.stdout.fnmatch_lines([f"NEW failure {MUST2} [[]fake[]]: not listed in *"])

    def test_other_plugins_entry_does_not_cover(self, kit, monkeypatch):
        monkeypatch.setenv("FAIL", MUST)
        result, _ = run(kit, *self.write(kit, f"other:{MUST}\n"))
        assert result.ret == 1
        result.stdout.fnmatch_lines(["known failures: plugin label 'other' *ignored"])

    def test_stale_entry_fails(self, kit):
        result, report = run(kit, *self.write(kit, f"{MUST}\n"))
        assert result.ret == 1
        assert report["verdict"] == "compliant"
        result.stdout.fnmatch_lines([f"STALE known failure {MUST} [[]fake[]]: it passes now; "
                                     "remove its line from *known.txt"])

    def test_own_failing_test_is_never_covered(self, kit, monkeypatch):
        kit.makepyfile(test_own="def test_mine():\n    assert False\n")
        monkeypatch.setenv("FAIL", MUST)
        result, _ = run(kit, *self.write(kit, f"{MUST}\n"))
        assert result.ret == 1

    def test_unknown_id_is_a_usage_error(self, kit):
        (kit.path / "known.txt").write_text("RDQ-XX-001\n")
        result = kit.runpytest("-p", "no:cacheprovider", "--rdq-known-failures", "known.txt")
        assert result.ret == pytest.ExitCode.USAGE_ERROR
        result.stderr.fnmatch_lines(["*known.txt:1: unknown requirement id='RDQ-XX-001'*"])
        assert "Traceback" not in result.stderr.str()

    def test_cli_round_trip(self, kit, monkeypatch):
        """`rdq-compliance known-failures` output makes the same run pass."""
        from rdq_compliance._cli import main

        monkeypatch.setenv("FAIL", f"{MUST},{MUST2}")
        result, _ = run(kit)
        assert result.ret == 1
        assert main(["known-failures", str(kit.path / "out/report.json"),
                     "-o", str(kit.path / "known.txt")]) == 0
        result, _ = run(kit, "--rdq-known-failures", "known.txt")
        assert result.ret == 0


def test_report_path_is_a_directory(kit):
    (kit.path / "adir").mkdir()
    result = kit.runpytest("-p", "no:cacheprovider", "--rdq-report", "adir")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--rdq-report=*adir* is a directory*"])


@pytest.mark.parametrize("flag", ["--rdq-report", "--rdq-badge", "--rdq-summary"])
def test_output_in_a_folder_that_cannot_be_made_stops_before_any_test(kit, flag):
    # A file where the folder should be: unwritable for root too (permission bits are not).
    (kit.path / "afile").write_text("")
    result = kit.runpytest("-p", "no:cacheprovider", flag, "afile/out/x")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"ERROR: {flag}=*afile/out/x': the * cannot be written there "
                                 "(*); expected a path in a folder this run can write to"])
    assert "passed" not in result.stdout.str()  # the run stopped before its tests


def test_ini_paths(kit):
    kit.makeini("[pytest]\nrdq_report = out/from_ini.json\n")
    result = kit.runpytest("-p", "no:cacheprovider")
    assert result.ret == 0
    report = json.loads((kit.path / "out/from_ini.json").read_text())
    assert report["verdict"] == "compliant"


def test_collect_only_writes_nothing(kit):
    result = kit.runpytest("-p", "no:cacheprovider", "--collect-only", "--rdq-report",
                           "out/report.json")
    assert result.ret == 0
    assert not (kit.path / "out/report.json").exists()
    assert "rdq compliance" not in result.stdout.str()


# -- issue 14 §6: CI file conventions ---------------------------------------------------------


def test_summary_is_appended_to_an_existing_file(kit):
    """$GITHUB_STEP_SUMMARY is an append file: the steps before keep their lines."""
    (kit.path / "out").mkdir()
    (kit.path / "out/summary.md").write_text("# build step\n", encoding="utf-8")
    run(kit)
    text = (kit.path / "out/summary.md").read_text(encoding="utf-8")
    assert text.startswith("# build step\n\n## rdq envelope v1")
    run(kit)
    assert (kit.path / "out/summary.md").read_text(encoding="utf-8").count("## rdq envelope") == 2


def test_outputs_are_ordinary_files(kit):
    import os
    import stat

    old = os.umask(0o022)
    try:
        run(kit)
    finally:
        os.umask(old)
    for name in ("report.json", "badge.svg", "badge.json", "summary.md"):
        assert stat.S_IMODE((kit.path / "out" / name).stat().st_mode) == 0o644, name


# -- issue 11: a report format is one module --------------------------------------------------

NEW_FORMAT = '''
"""--rdq-verdict PATH: the verdict word alone; a format the kit does not have."""
from ._base import ReportFormat


def _write(path, report):
    path.write_text(report["verdict"] + "\\n", encoding="utf-8")


FORMAT = ReportFormat(flag="--rdq-verdict", what="verdict", order=25, writer=_write,
                      help="write the verdict word to PATH")
'''

ADD_FORMAT = '''
# Loaded with -p, so before the pytest11 entry points add their options: the unit in
# more_formats/ joins the scan of the formats package as if it were one of its modules.
import pathlib

from rdq_compliance._pytest import formats

formats.__path__.append(str(pathlib.Path(__file__).parent / "more_formats"))
'''


def _add_new_format(pytester):
    """A plugin (``-p addformat``) that adds one format module, ``--rdq-verdict``, to the
    formats package; nothing of the kit is edited."""
    (pytester.path / "more_formats").mkdir()
    (pytester.path / "more_formats" / "verdict.py").write_text(NEW_FORMAT, encoding="utf-8")
    pytester.makepyfile(addformat=ADD_FORMAT)
    return pytester


@pytest.fixture
def new_format(kit):
    return _add_new_format(kit)


def test_a_new_format_module_gets_its_option(new_format):
    result = new_format.runpytest_subprocess("-p", "addformat", "--help")
    assert result.ret == 0
    # in the order of the units: between --rdq-badge (20) and --rdq-badge-endpoint (30)
    result.stdout.fnmatch_lines(["  --rdq-badge=PATH *", "  --rdq-verdict=PATH    write the "
                                 "verdict word to PATH", "  --rdq-badge-endpoint=PATH"])
    result.stdout.fnmatch_lines(["  rdq_verdict (string): write the verdict word to PATH"])


def test_a_new_format_module_gets_its_configure_check(new_format):
    (new_format.path / "adir").mkdir()
    result = new_format.runpytest_subprocess("-p", "no:cacheprovider", "-p", "addformat",
                                             "--rdq-verdict", "adir")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: --rdq-verdict=*adir' is a directory; expected the path "
                                 "of the verdict file to write"])


def test_a_new_format_module_gets_its_file(new_format):
    result, report = run(new_format, "-p", "addformat", "--rdq-verdict", "out/verdict.txt",
                         subprocess=True)
    assert result.ret == 0
    assert (new_format.path / "out/verdict.txt").read_text() == report["verdict"] + "\n"
    result.stdout.fnmatch_lines(["report written: *report.json", "badge written: *badge.svg",
                                 "verdict written: *verdict.txt",
                                 "badge endpoint written: *badge.json",
                                 "summary written: *summary.md"])
    # its ini twin, like every option's
    new_format.makeini("[pytest]\nrdq_verdict = out/from_ini.txt\n")
    result = new_format.runpytest_subprocess("-p", "no:cacheprovider", "-p", "addformat")
    assert result.ret == 0
    assert (new_format.path / "out/from_ini.txt").read_text() == "compliant\n"


def test_a_new_format_module_is_written_after_a_usage_error(pytester):
    """A CI job archives every output whatever happened: the new one too."""
    _add_new_format(pytester)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "addformat",
                                           "--rdq-plugin=nope", "--rdq-verdict", "out/v.txt")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert (pytester.path / "out/v.txt").read_text() == "incomplete\n"
