"""The kit's options, ini twins, usage errors and collection, end to end with pytester."""

from __future__ import annotations

import ast
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests._pytest._standin import run

# One fast kit test per run unless a test needs more.
ONE = ("-k", "test_missing_id_reads_as_nothing")


def _usage_error(result: pytest.RunResult) -> str:
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str() + result.stderr.str()
    errors = [ln for ln in result.stderr.lines if ln.startswith("ERROR:")]
    assert len(errors) == 1, result.stderr.lines
    assert "Traceback" not in result.stdout.str() + result.stderr.str()
    return errors[0]


def test_without_rdq_plugin_the_kit_adds_nothing(kit: pytest.Pytester) -> None:
    kit.makepyfile(test_own="def test_mine():\n    assert True\n")
    result = run(kit, "-v")
    result.assert_outcomes(passed=1)
    assert "rdq_compliance/suites" not in result.stdout.str()


def test_suites_run_from_an_empty_folder(kit: pytest.Pytester) -> None:
    result = run(kit, "--rdq-plugin=fake", *ONE, "-v")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines([
        "rdq_compliance/suites/test_storage.py::test_missing_id_reads_as_nothing[[]fake[]] PASSED*"
    ])


def test_suites_run_beside_own_tests_and_given_paths(kit: pytest.Pytester) -> None:
    kit.makepyfile(test_own="def test_mine():\n    assert True\n")
    result = run(kit, "--rdq-plugin=fake", "test_own.py", "-k", "mine or missing_id")
    result.assert_outcomes(passed=2)


def test_each_plugin_gets_its_own_test_ids(kit: pytest.Pytester) -> None:
    result = run(kit, "--rdq-plugin=fake", "--rdq-plugin=standin:plugin", *ONE, "-v")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines([
        "*test_missing_id_reads_as_nothing[[]fake[]] PASSED*",
        "*test_missing_id_reads_as_nothing[[]standin:plugin[]] PASSED*",
    ])


def test_ini_settings_are_equivalent(kit: pytest.Pytester) -> None:
    kit.makeini(
        "[pytest]\nrdq_plugins = fake\nrdq_profile = quick\nrdq_options = fault=drop-ms\n"
        "rdq_seed = 7\nrdq_timeout = 5\n"
    )
    result = kit.runpytest("-p", "no:cacheprovider", "-k", "test_timestamp_keeps_milliseconds")
    # fault=drop-ms from the ini file reached the plugin: the ms checks fail
    outcomes = result.parseoutcomes()
    assert outcomes.get("failed", 0) >= 1, result.stdout.str()


def test_ini_values_are_validated_too(kit: pytest.Pytester) -> None:
    kit.makeini("[pytest]\nrdq_plugins = fake\nrdq_profile = fast\n")
    line = _usage_error(kit.runpytest("-p", "no:cacheprovider"))
    assert "--rdq-profile='fast' is not a profile; expected one of quick, ci, thorough" in line


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--rdq-plugin=nope"], "--rdq-plugin='nope' is not an installed rdq storage plugin; "
                                "found: *fake*stdio*"),
        (["--rdq-plugin=fake", "--rdq-profile=fast"],
         "--rdq-profile='fast' is not a profile; expected one of quick, ci, thorough"),
        (["--rdq-plugin=fake", "--rdq-seed=abc"], "--rdq-seed='abc' is not an integer*"),
        (["--rdq-plugin=fake", "--rdq-timeout=0"], "--rdq-timeout='0' is not a positive number*"),
        (["--rdq-plugin=fake", "--rdq-timeout=nan"], "--rdq-timeout='nan' is not a positive*"),
        (["--rdq-plugin=fake", "--rdq-option=dsn=x"],
         "--rdq-option='dsn=x': no selected plugin declares option 'dsn'*"),
        (["--rdq-plugin=fake", "--rdq-option=oops"], "--rdq-option='oops' is not KEY=VALUE*"),
        (["--rdq-plugin=fake", "--rdq-option=fault=zap"],
         "plugin 'fake': option fault='zap' (from --rdq-option) is not one of*"),
        (["--rdq-plugin=stdio"], "plugin 'stdio' requires option 'command'*--rdq-testee*"),
        (["--rdq-plugin=fake", "--rdq-testee=./t"], "--rdq-testee='./t' is only used with*"),
        (["--rdq-plugin=fake", "--rdq-replay=missing.json"],
         "--rdq-replay='*missing.json': no such file"),
    ],
    ids=["unknown-plugin", "profile", "seed", "timeout-zero", "timeout-nan", "undeclared-option",
         "malformed-option", "option-choice", "missing-required", "testee-without-stdio",
         "replay-missing"],
)
def test_usage_errors(kit: pytest.Pytester, args: list[str], expected: str) -> None:
    line = _usage_error(kit.runpytest("-p", "no:cacheprovider", *args))
    assert line.startswith("ERROR: ")
    from fnmatch import fnmatchcase

    assert fnmatchcase(line[len("ERROR: "):], expected), line


def test_report_format_options_live_only_in_their_units() -> None:
    """Adding a report format is adding one module of ``_pytest/formats/`` (issue 11): no
    other module of the kit lists a format, neither as an option row (``_options``) nor
    as a dispatch key (``reporting_plugin``), nor imports a unit to list it. A flag quoted
    in a message is fine: only a string that is the flag or the ini name alone counts."""
    import rdq_compliance
    from rdq_compliance._pytest import formats

    units = formats.report_formats()
    assert [f.flag for f in units] == [
        "--rdq-report", "--rdq-badge", "--rdq-badge-endpoint", "--rdq-summary", "--rdq-html"]
    unit_of = {}  # flag and ini name -> the unit module that owns them
    for f in units:
        unit_of[f.flag] = unit_of[f.ini] = Path(sys.modules[f.writer.__module__].__file__ or "")
    stems = {p.stem for p in unit_of.values()}
    package = Path(rdq_compliance.__file__).parent
    found = []
    for path in sorted(package.rglob("*.py")):
        where = path.relative_to(package)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and node.value in unit_of:
                if path != unit_of[node.value]:
                    found.append(f"{where}:{node.lineno}: {node.value!r}")
            elif isinstance(node, ast.ImportFrom) and path.parent != Path(formats.__file__).parent:
                parts = (node.module or "").split(".")
                if "formats" in parts and (parts[-1] in stems
                                           or any(a.name in stems for a in node.names)):
                    found.append(f"{where}:{node.lineno}: imports a format unit")
    assert found == []


def test_replay_file_that_is_not_a_case(kit: pytest.Pytester) -> None:
    kit.makefile(".json", bad="[1, 2]")
    line = _usage_error(kit.runpytest("-p", "no:cacheprovider", "--rdq-plugin=fake",
                                      "--rdq-replay=bad.json"))
    assert "is not a case file of format 1 saved by the kit" in line


def test_tests_are_tagged_for_reports(kit: pytest.Pytester) -> None:
    result = run(kit, "--rdq-plugin=fake", "-k", "test_write_replaces or test_numbers_are_exact",
                 "--junitxml=out.xml", "--rdq-allow-incomplete")  # a partial run, on purpose
    assert result.ret == 0
    root = ET.parse(kit.path / "out.xml").getroot()
    cases = root.iter("testcase")
    seen = {}
    for case in cases:
        props = {p.get("name"): p.get("value") for p in case.iter("property")}
        seen[case.get("name")] = props
    assert seen["test_write_replaces[fake-rich-then-bare]"] == {
        "rdq_requirement": "RDQ-ST-001", "rdq_level": "MUST", "rdq_clauses": "C13",
        "rdq_plugin": "fake",
    }
    assert seen["test_numbers_are_exact[fake-int64-max]"]["rdq_clauses"] == "C5"


def test_capability_gated_requirement_is_skipped(kit: pytest.Pytester) -> None:
    result = run(kit, "--rdq-plugin=fake", "-k", "test_durable_across_reopen", "-rs")
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines(["*plugin declares no 'durable' capability*"])


def test_durable_check_reads_through_a_fresh_storage(kit: pytest.Pytester) -> None:
    result = run(kit, "--rdq-plugin=fake", "--rdq-option=durable=yes",
                 "-k", "test_durable_across_reopen")
    result.assert_outcomes(passed=1)


def test_full_suite_passes_against_a_correct_plugin(kit: pytest.Pytester) -> None:
    result = run(kit, "--rdq-plugin=fake", "--rdq-option=durable=yes", "-rs")
    outcomes = result.parseoutcomes()
    assert result.ret == 0, result.stdout.str()[-3000:]
    assert outcomes["passed"] >= 200 and "failed" not in outcomes
    # The only skips: the upgrade tests (not applicable without --rdq-upgrade-check), the
    # not-applicable case of versions the plugin does not declare, the refusal of a write
    # past 1 MiB by a plugin that stores it, and what is gated on the one capability the
    # stand-in does not declare (concurrent).
    skips = [line for line in result.outlines if line.startswith("SKIPPED")]
    reasons = ("--rdq-upgrade-check", "plugin declares no envelope version beyond [1]",
               "past C2's 1,048,576: no refusal to check", "no 'concurrent' capability")
    assert outcomes.get("skipped", 0) == 10, skips
    assert all(any(r in line for r in reasons) for line in skips), skips


def test_a_plugin_failing_only_a_should_is_compliant(kit: pytest.Pytester) -> None:
    """A drop of a namespace that holds nothing raises (DROP TABLE without IF EXISTS):
    C14 says only that it SHOULD succeed (RDQ-ST-007). The state machine and every
    teardown drop such namespaces too; failing their MUST requirements for it made the
    plugin non-compliant. Only RDQ-ST-007 fails now, and the verdict is compliant (exit
    status 1, pytest's rule for a failed SHOULD test, as the README says)."""
    import json

    result = run(kit, "--rdq-plugin=fake", "--rdq-option=fault=drop-empty-raises",
                 "--rdq-report=r.json")
    report = json.loads((kit.path / "r.json").read_text(encoding="utf-8"))
    (plugin,) = report["plugins"]
    failed = {r["id"] for r in plugin["requirements"] if r["status"] == "failed"}
    assert failed == {"RDQ-ST-007"}, result.stdout.str()[-3000:]
    assert plugin["verdict"] == "compliant", result.stdout.str()[-3000:]
    assert result.ret == 1
    assert [c["requirement"] for c in plugin["causes"]] == ["RDQ-ST-007"]


def test_explicit_suite_path_collects_only_that_suite(kit: pytest.Pytester) -> None:
    from rdq_compliance._pytest.kit import SUITES_DIR

    result = run(kit, "--rdq-plugin=fake", str(SUITES_DIR / "test_versions.py"), "-v")
    # Only one suite ran: incomplete, which fails the run (issue 12 §1).
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["INCOMPLETE: * MUST requirements of plugin 'fake' not tested: *"])
    assert "test_versions.py" in result.stdout.str()
    assert "test_golden.py" not in result.stdout.str()


def test_authors_own_hypothesis_tests_are_unaffected(
    kit: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The author's Hypothesis settings with the kit loaded must equal those without it
    # (whatever the environment makes them: Hypothesis picks other defaults under CI=true).
    out = kit.path / "own-settings.txt"
    monkeypatch.setenv("OWN_OUT", str(out))
    kit.makepyfile(test_own='''
        import json, os
        from hypothesis import given, settings, strategies as st

        calls = []

        @given(st.integers())
        def test_default_settings(n):
            calls.append(n)

        def test_record_settings():
            s = settings()
            seen = [s.max_examples, repr(s.deadline), s.derandomize, repr(s.database),
                    repr(s.phases), repr(s.suppress_health_check), len(calls) > 0]
            with open(os.environ["OWN_OUT"], "a") as f:
                f.write(json.dumps(seen) + "\\n")
    ''')
    plain = kit.runpytest_subprocess("-p", "no:cacheprovider", "test_own.py")
    plain.assert_outcomes(passed=2)
    result = run(kit, "--rdq-plugin=fake", "test_own.py", "-k",
                 "default_settings or record_settings or test_generated_envelopes_roundtrip",
                 subprocess=True)
    result.assert_outcomes(passed=3)
    without_kit, with_kit = out.read_text().splitlines()
    assert with_kit == without_kit


def test_stdio_testee_end_to_end(kit: pytest.Pytester) -> None:
    """The built-in stdio plugin with the bridge's own fake testee: a mangled timestamp
    on the wire fails the read, naming RDQ-RT-004 and C3."""
    # The bridge's tests moved from tests/stdio to tests/storage: a missing testee is a
    # broken path to fix, not a reason to skip (a skip here hid that move).
    testee = Path(__file__).parents[1] / "storage" / "testees" / "good.py"
    assert testee.exists(), f"the stdio bridge's fake testee path={str(testee)!r} is missing"
    good = f"{sys.executable} {testee}"
    ok = run(kit, "--rdq-plugin=stdio", f"--rdq-testee={good} --durable",
             "-k", "test_payload_bytes_are_kept or test_durable_across_reopen")
    ok.assert_outcomes(passed=8)
    bad = run(kit, "--rdq-plugin=stdio", f"--rdq-testee={good} --mangle timestamp",
              "-k", "test_payload_bytes_are_kept and empty")
    bad.assert_outcomes(failed=1)
    bad.stdout.fnmatch_lines(["*RDQ-RT-004: what a plugin returns*clauses broken: C3*"])
