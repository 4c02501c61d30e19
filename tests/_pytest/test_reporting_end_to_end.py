"""End to end with the real kit: `pytest --rdq-plugin=module:attr` on stand-in plugins.

The three verdicts each come from a real run (issue 4 "Done when"), plus the
report on -x and under -n 2, JUnit XML properties, the known-failures gate and
hostile plugin text. Every report produced is validated against the schema and
its digest checked with `rdq-compliance verify`.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET

import pytest

from rdq_compliance._cli import main as cli
from rdq_compliance._requirements import REQUIREMENTS
from tests.reporting._synth import validate_schema

STANDIN = '''
"""Stand-in storage plugins for the reporting tests (this module)."""
import dataclasses

from rdq_compliance import (StorageInfo, StorageUnavailable, encode, from_json, hookimpl,
                            parse_json)

HOSTILE = "<script>alert(1)</script>\\"&'"
_DURABLE = {}  # module level: survives a close and a fresh rdq_storage_open


class Adapter:
    def __init__(self, data, mangle):
        self.data, self.mangle = data, mangle

    def write(self, envelope):
        self.data[envelope.id] = encode(envelope)

    def read(self, id):
        text = self.data.get(id)
        if text is None:
            return None
        env = from_json(parse_json(text))
        return self.mangle(env)

    def close(self):
        pass


class Storage:
    def __init__(self, name, caps, namespaces, mangle):
        self.info = StorageInfo(name, "1.0.0", frozenset({1}), frozenset(caps))
        self.namespaces, self.mangle = namespaces, mangle

    def open(self, namespace):
        return Adapter(self.namespaces.setdefault(namespace, {}), self.mangle)

    def drop(self, namespace):
        self.namespaces.pop(namespace, None)

    def close(self):
        pass


def _same(env):
    return env


def _drop_unknown_fields(env):
    # a classic defect: the residual of unknown top-level fields is not stored (C10)
    return dataclasses.replace(env, extra={})


class Plugin:
    def __init__(self, name="standin", caps=(), durable=False, mangle=_same, down=None):
        self.name, self.caps, self.durable, self.mangle, self.down = (
            name, caps, durable, mangle, down)

    @hookimpl
    def rdq_storage_open(self, options):
        if self.down:
            raise StorageUnavailable(self.down, setting="dsn")
        namespaces = _DURABLE if self.durable else {}
        return Storage(self.name, self.caps, namespaces, self.mangle)


good = Plugin()
durable = Plugin(name="standin-durable", caps=("durable",), durable=True)
concurrent = Plugin(name="standin-concurrent", caps=("concurrent",))  # dict item set: atomic
lossy = Plugin(name="standin-lossy", mangle=_drop_unknown_fields)
hostile = Plugin(name=HOSTILE, mangle=_drop_unknown_fields)
down = Plugin(down="cannot connect to dsn='postgresql://127.0.0.1:1/x' <b>&amp;</b>")
'''

COUNT_WRITES = '''
import os
# where the report format units get it from when they write (formats/report.py)
from rdq_compliance.reporting import _report

_real = _report.write_json


def _counting(path, value):
    with open("writes.log", "a") as f:
        f.write(f"{os.getpid()} {path}\\n")
    _real(path, value)


_report.write_json = _counting
'''

LIVE = [r for r in REQUIREMENTS if not r.retired]
UF_MUST = "RDQ-UF-001"  # what the lossy stand-in fails
UF_TEST = "top_level_unknown_fields_of_every_type"  # a fast, deterministic RDQ-UF-001 test


@pytest.fixture
def kit(pytester):
    pytester.makepyfile(standin=STANDIN)
    pytester.syspathinsert()
    return pytester


def run(pytester, plugin, *args, outputs=True):
    """A real kit run in a subprocess: in-process pytester runs drop and re-import the
    modules a run imported, which splits Hypothesis into two copies on the second run."""
    base = ["-p", "no:cacheprovider", f"--rdq-plugin=standin:{plugin}", "--rdq-profile=quick"]
    if outputs:
        base += ["--rdq-report", "out/report.json", "--rdq-badge", "out/badge.svg",
                 "--rdq-badge-endpoint", "out/badge.json", "--rdq-summary", "out/summary.md"]
    result = pytester.runpytest_subprocess(*base, *args)
    report = json.loads((pytester.path / "out/report.json").read_text())
    validate_schema(report)
    assert cli(["verify", str(pytester.path / "out/report.json")]) == 0
    return result, report


def statuses(report):
    return {r["id"]: r["status"] for r in report["plugins"][0]["requirements"]}


def badge_text(pytester):
    root = ET.parse(pytester.path / "out/badge.svg").getroot()
    return ["".join(t.itertext()) for t in root.iter("{http://www.w3.org/2000/svg}text")][-1]


def test_correct_plugin_is_compliant(kit):
    """Also the exit status's compliant case (test_exit_status): exit 0, no INCOMPLETE
    line, the report, badge and summary written."""
    result, report = run(kit, "good")
    assert result.ret == 0, result.stdout.str()
    assert report["verdict"] == "compliant"
    assert not [ln for ln in result.stdout.lines if ln.startswith("INCOMPLETE")]
    assert (kit.path / "out/summary.md").read_text(encoding="utf-8")
    p = report["plugins"][0]
    assert (p["label"], p["name"], p["version"]) == ("standin:good", "standin", "1.0.0")
    st = statuses(report)
    gated = {r.id for r in LIVE if r.capability}  # durable, concurrent: not declared
    assert {st[rid] for rid in gated} == {"not-applicable"}
    assert {s for rid, s in st.items() if rid not in gated} == {"passed"}
    assert all(r["tests"] for r in p["requirements"] if r["id"] not in gated)
    assert badge_text(kit) == "compliant · quick profile"  # a quick run says so
    assert report["seed"] == 0 and report["profile"] == "quick"
    result.stdout.fnmatch_lines(["*= rdq compliance =*", "verdict: COMPLIANT",
                                 "plugin standin:good (standin 1.0.0, envelope v1, "
                                 "capabilities: none): compliant",
                                 "  golden *passed, 0 failed, 0 skipped, 0 error",
                                 "report written: *report.json"])


def test_durable_plugin_badge_names_the_capability(kit):
    # The upgrade tests (also gated on durable) run to say they do not apply here: a
    # deselected gated MUST requirement would leave the capability unverified.
    result, report = run(kit, "durable", "-k", "durable_across_reopen or upgrade",
                         "--rdq-allow-incomplete")
    assert result.ret == 0
    assert statuses(report)["RDQ-RT-003"] == "passed"
    assert statuses(report)["RDQ-UP-001"] == "not-applicable"
    assert report["plugins"][0]["capabilities_verified"] == ["durable"]


def test_concurrent_plugin_report_names_the_capability(kit):
    # C18: the capability is verified only when RDQ-CC-001..005 all passed.
    result, report = run(kit, "concurrent", "-k", "concurrency", "--rdq-allow-incomplete")
    assert result.ret == 0
    assert {statuses(report)[f"RDQ-CC-00{i}"] for i in range(1, 6)} == {"passed"}
    assert report["plugins"][0]["capabilities_verified"] == ["concurrent"]
    text = (kit.path / "out/summary.md").read_text()
    assert "concurrent" in text


def test_defective_plugin_is_non_compliant_and_its_hostile_name_is_contained(kit):
    """The `hostile` stand-in loses unknown fields and is named <script>...: its text
    must not break or inject into the SVG, the Markdown or the terminal."""
    result, report = run(kit, "hostile", "-k", UF_TEST)
    assert result.ret == 1
    assert report["verdict"] == "non-compliant"
    assert report["plugins"][0]["name"] == "<script>alert(1)</script>\"&'"
    st = statuses(report)
    assert st[UF_MUST] == "failed"
    req = next(r for r in report["plugins"][0]["requirements"] if r["id"] == UF_MUST)
    assert req["first_failure"] and "RDQ-UF-001" in req["first_failure"]
    assert badge_text(kit) == "non-compliant · quick profile"
    svg = (kit.path / "out/badge.svg").read_text()
    assert "<script" not in svg
    assert "&lt;script&gt;alert(1)&lt;/script&gt;&quot;&amp;&apos;" in svg  # in the title
    summary = (kit.path / "out/summary.md").read_text()
    assert "### Failures" in summary and UF_MUST in summary
    assert "| &lt;script&gt;alert(1)&lt;/script&gt;" in summary
    result.stdout.fnmatch_lines(["verdict: NON-COMPLIANT",
                                 "plugin standin:hostile (<script>alert(1)</script>\"&' 1.0.0, *",
                                 f"  FAILED {UF_MUST} MUST [[]C10[]] *"])


def test_deselected_must_is_incomplete(kit):
    result, report = run(kit, "good", "-k", "golden")
    assert result.ret == 1  # issue 12 §1: an incomplete run fails unless allowed
    assert statuses(report)["RDQ-GOLD-001"] == "passed"
    assert statuses(report)["RDQ-RT-001"] == "not-run"
    assert report["verdict"] == "incomplete"
    assert badge_text(kit) == "incomplete · quick profile"


def test_unavailable_plugin_is_incomplete(kit, monkeypatch):
    monkeypatch.delenv("RDQ_REQUIRE_SERVICES", raising=False)  # CI sets it: then it is an error
    result, report = run(kit, "down")
    assert result.ret == 1  # skipped tests: incomplete fails the run (issue 12 §1)
    assert report["verdict"] == "incomplete"
    p = report["plugins"][0]
    assert p["name"] is None and "cannot connect" in p["unavailable"]
    assert "passed" not in statuses(report).values()


def test_report_written_on_maxfail(kit):
    result, report = run(kit, "lossy", "-x", "-k", f"{UF_TEST} or golden")
    assert result.ret == 1
    assert report["verdict"] == "non-compliant"
    assert report["aborted"] == "after the first failure (-x)"
    assert "not-run" in statuses(report).values()


def test_report_written_once_under_xdist(kit):
    kit.makeconftest(COUNT_WRITES)
    result, report = run(kit, "lossy", "-n", "2", "-k", f"{UF_TEST} or golden")
    assert result.ret == 1
    writes = [ln for ln in (kit.path / "writes.log").read_text().splitlines()
              if ln.endswith("report.json")]
    assert len(writes) == 1, writes
    st = statuses(report)
    assert st[UF_MUST] == "failed" and st["RDQ-GOLD-001"] in ("passed", "failed")
    assert report["verdict"] == "non-compliant"


def test_junitxml_has_requirement_properties(kit):
    run(kit, "good", "-k", "golden", "--junitxml", "out/junit.xml", outputs=True)
    cases = list(ET.parse(kit.path / "out/junit.xml").getroot().iter("testcase"))
    assert cases
    for case in cases:
        props = {p.get("name"): p.get("value") for p in case.iter("property")}
        assert props["rdq_requirement"] == "RDQ-GOLD-001"
        assert props["rdq_clauses"] == " ".join(
            next(r for r in LIVE if r.id == "RDQ-GOLD-001").clauses)
        assert props["rdq_plugin"] == "standin:good"


class TestKnownFailures:
    def test_listed_failure_passes_the_run(self, kit):
        result, report = run(kit, "lossy", "-k", UF_TEST)
        assert result.ret == 1
        assert cli(["known-failures", str(kit.path / "out/report.json"), "-o",
                    str(kit.path / "known.txt")]) == 0
        assert UF_MUST in (kit.path / "known.txt").read_text()
        result, report = run(kit, "lossy", "-k", UF_TEST,
                             "--rdq-known-failures", "known.txt", "--rdq-allow-incomplete")
        assert result.ret == 0, result.stdout.str()
        assert report["verdict"] == "non-compliant"

    def test_unlisted_failure_fails_the_run(self, kit):
        (kit.path / "known.txt").write_text("RDQ-ST-001\n")
        result, _ = run(kit, "lossy", "-k", UF_TEST, "--rdq-known-failures",
                        "known.txt")
        assert result.ret == 1
        result.stdout.fnmatch_lines([f"NEW failure {UF_MUST} *"])

    def test_a_failure_by_another_cause_is_new(self, kit):
        """Issue 21 §4: the file lists the requirement for one cause (its signature); the
        same requirement failing by another cause is a new defect and fails the run."""
        (kit.path / "known.txt").write_text(f"{UF_MUST} cause=c0123456789ab  # another\n")
        result, report = run(kit, "lossy", "-k", UF_TEST, "--rdq-known-failures", "known.txt",
                             "--rdq-allow-incomplete")
        assert result.ret == 1, result.stdout.str()
        (cause,) = report["plugins"][0]["causes"]
        result.stdout.fnmatch_lines([f"NEW failure {UF_MUST} *: it fails by a cause not listed "
                                     f"in *known.txt (cause={cause['signature']})"])
        (kit.path / "known.txt").write_text(f"{UF_MUST} cause={cause['signature']}\n")
        result, _ = run(kit, "lossy", "-k", UF_TEST, "--rdq-known-failures", "known.txt",
                        "--rdq-allow-incomplete")
        assert result.ret == 0, result.stdout.str()

    def test_stale_entry_fails_the_run(self, kit):
        (kit.path / "known.txt").write_text("# fixed since\nRDQ-GOLD-001\n")
        result, report = run(kit, "good", "-k", "golden", "--rdq-known-failures", "known.txt")
        assert statuses(report)["RDQ-GOLD-001"] == "passed"
        assert result.ret == 1
        result.stdout.fnmatch_lines(["STALE known failure RDQ-GOLD-001 *remove its line*"])

    def test_unknown_id_is_a_usage_error(self, kit):
        (kit.path / "known.txt").write_text("RDQ-NOPE-001\n")
        # A subprocess: an in-process run would reuse another test's cached `standin`.
        result = kit.runpytest_subprocess("-p", "no:cacheprovider", "--rdq-plugin=standin:good",
                                          "--rdq-known-failures", "known.txt")
        assert result.ret == pytest.ExitCode.USAGE_ERROR
        result.stderr.fnmatch_lines(["*unknown requirement id='RDQ-NOPE-001'*"])


# -- issue 14: causes through xdist, addressable requirements, a clean folder, wording ---------


def test_causes_travel_from_xdist_workers_to_the_report(kit):
    """RDQ-UF-001 (C10): the lossy stand-in's failures carry their symptom from the
    workers (user_properties) to the controller's report, terminal and summary."""
    result, report = run(kit, "lossy", "-n", "2", "-k", f"{UF_TEST} or unknown_fields_every")
    (cause,) = report["plugins"][0]["causes"]
    assert (cause["pointer"], cause["kind"]) == ("/*", "unknown field missing")
    assert cause["clause"] == "C10" and cause["requirement"] == UF_MUST  # not C5 (issue 21)
    assert "unknown field" in cause["example"] and "missing" in cause["example"]
    result.stdout.fnmatch_lines(["  1 cause explains * failure*:",
                                 f"    1. /[*] unknown field * missing [[]C10[]] → {UF_MUST} (*"])
    assert "1 cause explains" in (kit.path / "out/summary.md").read_text()


def test_more_than_twenty_differences_say_so_once(kit):
    """Wording (issue 14 §4): "… and N more" once, not a clause-tagged copy before it."""
    result, _ = run(kit, "lossy", "-k", UF_TEST)
    text = result.stdout.str()
    assert re.search(r"… and \d+ more\s+\[", text) is None
    assert len(re.findall(r"^E\s+… and 1 more$", text, re.M)) == 1


def _suite_tests_of(rid: str) -> set[str]:
    import importlib

    from rdq_compliance._pytest.kit import SUITE_FILES

    names = set()
    for path in SUITE_FILES:
        module = importlib.import_module(f"rdq_compliance.suites.{path.stem}")
        for name, fn in vars(module).items():
            marks = getattr(fn, "pytestmark", [])
            if name.startswith("test_") and any(m.name == "rdq_requirement" and m.args == (rid,)
                                                for m in marks):
                names.add(name)
    return names


@pytest.mark.parametrize("how", ["-k", "-m"])
def test_a_requirement_id_selects_exactly_its_tests(kit, how):
    """Requirements are addressable (issue 14 §5): -k/-m RDQ-UF-001."""
    result = kit.runpytest_subprocess("-p", "no:cacheprovider", "--rdq-plugin=standin:good",
                                      "--co", "-q", "--strict-markers", how, UF_MUST)
    assert result.ret == 0, result.stdout.str()
    ids = [ln for ln in result.stdout.lines if "::" in ln]
    assert ids
    assert {i.split("::")[1].split("[")[0] for i in ids} == _suite_tests_of(UF_MUST)


def test_a_run_leaves_only_what_was_asked_for(kit, monkeypatch, tmp_path_factory):
    """CI conventions (issue 14 §6): the outputs and the failures directory, nothing else
    (no .hypothesis: Hypothesis's cache goes to the user's cache directory)."""
    cache = tmp_path_factory.mktemp("cache")
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))  # pytester's HOME is its own folder
    monkeypatch.delenv("HYPOTHESIS_STORAGE_DIRECTORY", raising=False)
    before = {p.name for p in kit.path.iterdir()}
    run(kit, "lossy", "-k", f"{UF_TEST} or generated_top_level")
    # __pycache__ of standin.py is Python's; stdout/stderr are pytester's capture files
    after = {p.name for p in kit.path.iterdir()
             if not p.name.startswith("runpytest")} - {"__pycache__", "stdout", "stderr"}
    assert after - before == {"out", ".rdq"}, after - before
    assert (cache / "rdq-compliance" / "hypothesis").is_dir()
    assert (kit.path / ".rdq/failures").is_dir()
