"""A misbehaving plugin makes kit tests FAIL (never pytest itself), and the run ends."""

from __future__ import annotations

import time

import pytest

from rdq_compliance._requirements import REQUIREMENTS, Level
from tests._pytest._standin import run

ROUNDTRIP = ("-k", "test_payload_bytes_are_kept and empty")  # one small round trip
# Every MUST requirement: a plugin that cannot be opened tests none of them.
_MUSTS = sum(r.level == Level.MUST and not r.retired for r in REQUIREMENTS)


def _fault(kit: pytest.Pytester, fault: str, *args: str, **kw: bool) -> pytest.RunResult:
    return run(kit, "--rdq-plugin=fake", f"--rdq-option=fault={fault}", *args, **kw)


def _no_internal_error(result: pytest.RunResult) -> str:
    out = result.stdout.str()
    assert "INTERNALERROR" not in out
    assert result.ret == pytest.ExitCode.TESTS_FAILED, out
    return out


def test_plugin_exception_fails_the_test_with_its_traceback(kit: pytest.Pytester) -> None:
    result = _fault(kit, "raise-on-read", *ROUNDTRIP)
    out = _no_internal_error(result)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "*RDQ-RT-008 [[]MUST; C7[]] The payload comes back byte for byte*",
        "*plugin 'fake': read('*') in namespace 't*' raised KeyError: 'no row for *'",
        "*plugin traceback:*",
    ])
    assert "in _explode" in out  # the plugin's own frame is shown
    assert "_runner.py" not in out.split("plugin traceback:")[1].split("envelope")[0]


def test_wrong_return_type_fails(kit: pytest.Pytester) -> None:
    result = _fault(kit, "read-wrong-type", *ROUNDTRIP)
    _no_internal_error(result)
    result.stdout.fnmatch_lines(
        ["*read('*') in namespace '*' returned str '{*; expected rdq_compliance.Envelope or None"]
    )


def test_write_must_return_none(kit: pytest.Pytester) -> None:
    result = _fault(kit, "write-returns", *ROUNDTRIP)
    _no_internal_error(result)
    result.stdout.fnmatch_lines(["*write(envelope id='*') in namespace '*' returned True; "
                                 "expected None*"])


def test_mutating_the_written_envelope_is_detected(kit: pytest.Pytester) -> None:
    result = _fault(kit, "mutate", *ROUNDTRIP)
    _no_internal_error(result)
    result.stdout.fnmatch_lines([
        "*changed the envelope object it was given*",
        "*/headers/x-touched-by-plugin*",
    ])


def test_refusing_a_valid_envelope_fails_citing_c17(kit: pytest.Pytester) -> None:
    result = _fault(kit, "refuse-internal", *ROUNDTRIP)
    _no_internal_error(result)
    result.stdout.fnmatch_lines([
        "*refused a valid envelope within the limits with StorageError(code=<ErrorCode.INTERNAL*"
        "(C17: a valid envelope within the limits must never be rejected)*"
    ])


def test_error_code_outside_c17_fails(kit: pytest.Pytester) -> None:
    result = _fault(kit, "bad-code", *ROUNDTRIP)
    _no_internal_error(result)
    result.stdout.fnmatch_lines(["*code='DISK_FULL'*whose code is not one of the C17 codes*"])


def test_defect_names_requirement_clause_and_diff(kit: pytest.Pytester) -> None:
    result = _fault(kit, "drop-ms", "-k", "test_timestamp_keeps_milliseconds and leap")
    _no_internal_error(result)
    result.stdout.fnmatch_lines([
        "*RDQ-RT-007 [[]MUST; C3[]] Timestamps keep millisecond precision*",
        "*returned an envelope that differs from the one written:",
        "*/created_at: instant changed: expected 2024-02-29T12:00:00.001Z, "
        "got 2024-02-29T12:00:00.000Z*[[]C3[]]",
        '*"created_at": "2024-02-29T12:00:00.001Z",*',
    ])


def test_lost_unknown_fields_point_at_c10(kit: pytest.Pytester) -> None:
    result = _fault(kit, "drop-unknown-fields", "-k", "test_payload_ref_is_preserved and string")
    _no_internal_error(result)
    result.stdout.fnmatch_lines(["*RDQ-UF-004*", "*/payload_ref*[[]C10[]]"])


def test_shared_namespaces_fail_isolation(kit: pytest.Pytester) -> None:
    result = _fault(kit, "no-isolation", "-k", "test_namespaces_are_isolated")
    _no_internal_error(result)
    result.stdout.fnmatch_lines(["*RDQ-ST-003*", "*returned an envelope, expected None*"])


def test_hang_fails_within_the_timeout_and_the_run_ends(kit: pytest.Pytester) -> None:
    start = time.monotonic()
    result = _fault(kit, "hang-on-read", "--rdq-timeout=0.5", "-k",
                    "test_payload_bytes_are_kept and (empty or one-byte)", subprocess=True)
    elapsed = time.monotonic() - start
    _no_internal_error(result)
    result.assert_outcomes(failed=2)  # the second test ran on a freshly reopened storage
    result.stdout.fnmatch_lines([
        "*plugin 'fake': read('*') in namespace '*' did not return within 0.5 s "
        "(--rdq-timeout); the storage was abandoned*"
    ])
    assert elapsed < 30  # the plugin sleeps 60 s per read


def test_hang_in_a_property_is_not_shrunk(kit: pytest.Pytester) -> None:
    start = time.monotonic()
    result = _fault(kit, "hang-on-read", "--rdq-timeout=0.3", "-k",
                    "test_generated_envelopes_roundtrip", subprocess=True)
    _no_internal_error(result)
    result.assert_outcomes(failed=1)
    assert time.monotonic() - start < 20


def test_unavailable_storage_skips_with_one_reason(
    kit: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("RDQ_REQUIRE_SERVICES", raising=False)  # CI sets it
    result = _fault(kit, "unavailable", *ROUNDTRIP, "-rs")
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines([
        "*plugin 'fake' is unavailable: cannot reach standin at 127.0.0.1:1 "
        "(set it with --rdq-option fake.dsn=VALUE)*"
    ])


def test_unavailable_storage_fails_the_run_unless_incomplete_is_allowed(
    kit: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 12 §1: a run that tested nothing exits non-zero, with one final line saying
    what was not tested and why; --rdq-allow-incomplete (or its ini twin) accepts it.
    RDQ_REQUIRE_SERVICES is a knob of the kit's own tests only: it changes nothing here."""
    monkeypatch.setenv("RDQ_REQUIRE_SERVICES", "1")
    result = _fault(kit, "unavailable", *ROUNDTRIP)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.assert_outcomes(skipped=1)
    assert result.stdout.lines[-2].startswith(
        f"INCOMPLETE: {_MUSTS} MUST requirements of plugin 'fake' not tested: plugin 'fake' is "
        "unavailable: cannot reach standin at 127.0.0.1:1 (set it with --rdq-option "
        "fake.dsn=VALUE) -- exit status 1; fix the cause, or pass --rdq-allow-incomplete"
    ), result.stdout.lines[-3:]
    result = _fault(kit, "unavailable", *ROUNDTRIP, "--rdq-allow-incomplete")
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["INCOMPLETE: *exit status 0 (--rdq-allow-incomplete accepts*"])
    kit.makeini("[pytest]\nrdq_allow_incomplete = true\n")
    assert _fault(kit, "unavailable", *ROUNDTRIP).ret == pytest.ExitCode.OK


@pytest.mark.parametrize(
    ("fault", "message"),
    [
        ("open-raises", "*plugin 'fake': rdq_storage_open(options) raised RuntimeError: "
                        "standin cannot start*"),
        ("bad-info", "*plugin 'fake': storage.info returned {'name': 'standin'}; "
                     "expected rdq_compliance.StorageInfo*"),
    ],
)
def test_broken_open_is_one_message_and_incomplete(
    kit: pytest.Pytester, fault: str, message: str
) -> None:
    """Issue 12 §1 / issue 14 §4: a plugin that cannot be opened tested nothing: its
    tests skip with a one-line reason, the whole message (and the plugin's traceback)
    is shown once, the verdict is incomplete and the run exits 1."""
    result = _fault(kit, fault, "-k", "test_payload_bytes_are_kept and (empty or one-byte)",
                    "-rs")
    out = result.stdout.str()
    assert "INTERNALERROR" not in out
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.assert_outcomes(skipped=2)
    result.stdout.fnmatch_lines([message])
    assert out.count("Traceback (most recent call last)") == (fault == "open-raises"), out
    result.stdout.fnmatch_lines(["*- rdq: plugin 'fake' could not be opened -*", message,
                                 "*= rdq compliance =*"])
    assert "_multicall" not in out  # the plugin's frames only, not pluggy's
    result.stdout.fnmatch_lines(["verdict: INCOMPLETE",
                                 f"INCOMPLETE: {_MUSTS} MUST requirements of "
                                 "plugin 'fake' not tested: plugin 'fake': *"])


def test_report_says_why_a_broken_plugin_could_not_be_used(kit: pytest.Pytester) -> None:
    import json

    result = _fault(kit, "bad-info", "-k", "test_payload_bytes_are_kept and empty",
                    "--rdq-report", "report.json", subprocess=True)
    assert "INTERNALERROR" not in result.stdout.str()
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    report = json.loads((kit.path / "report.json").read_text(encoding="utf-8"))
    assert report["verdict"] == "incomplete"
    (plugin,) = report["plugins"]
    # The plugin opened, but its info is unusable: the reason says what is wrong with it,
    # never a bare "not opened".
    assert plugin["unavailable"].startswith(
        "plugin 'fake': storage.info returned {'name': 'standin'}; expected "
        "rdq_compliance.StorageInfo"
    ), plugin["unavailable"]


def test_the_same_exception_everywhere_shows_one_traceback(kit: pytest.Pytester) -> None:
    """Issue 14 §4: a plugin whose every call raises the same exception gets its
    traceback once; the other tests fail with a one-line pointer to it."""
    result = _fault(kit, "raise-always", "-k", "test_payload_bytes_are_kept")
    out = _no_internal_error(result)
    failed = result.parseoutcomes()["failed"]
    assert failed >= 3
    assert out.count("ConnectionError: connection reset by peer") >= failed  # each says why
    # The failure sections only: with CI=true pytest repeats whole messages in its short
    # test summary, which is pytest's choice, not the kit's.
    sections = out.split("short test summary info", 1)[0]
    assert sections.count("plugin traceback:\n") == 1, out
    assert sections.count("plugin traceback: the same as shown for rdq_compliance/suites/"
                          "test_roundtrip.py::test_payload_bytes_are_kept[fake-") == failed - 1
