"""Every verdict rule of issue 4 §2, on synthetic results."""

from __future__ import annotations

import pytest

from rdq_compliance.reporting import (
    PluginMeta,
    RequirementStatus,
    ResultCollector,
    TestResult,
    TestStatus,
    Verdict,
    evaluate,
    evaluate_plugin,
    worst,
)

from ._synth import GATED, MUSTS, SHOULDS, UNGATED_MUST, meta, passing

S, T, V = RequirementStatus, TestStatus, Verdict


def status_of(result, rid):
    return next(r for r in result.requirements if r.requirement.id == rid)


def test_all_passed_is_compliant():
    r = evaluate_plugin(meta(), passing())
    assert r.verdict is V.COMPLIANT
    assert all(x.status in (S.PASSED, S.NOT_APPLICABLE) for x in r.requirements)


def test_gated_requirement_without_capability_is_not_applicable_even_unrun():
    gated = GATED[0]
    r = evaluate_plugin(meta(), passing(override={gated.id: None}))
    x = status_of(r, gated.id)
    assert x.status is S.NOT_APPLICABLE
    assert repr(gated.capability) in x.reason
    assert r.verdict is V.COMPLIANT
    assert r.capabilities_verified == ()


def test_declared_capability_is_required_and_verified():
    gated = GATED[0]
    caps = [gated.capability]
    ok = evaluate_plugin(meta(caps=caps), passing(caps=caps))
    assert ok.verdict is V.COMPLIANT
    assert ok.capabilities_verified == (gated.capability,)
    skipped = evaluate_plugin(meta(caps=caps), passing(caps=caps,
                                                       override={gated.id: T.SKIPPED}))
    assert status_of(skipped, gated.id).status is S.SKIPPED
    assert skipped.verdict is V.INCOMPLETE
    assert skipped.capabilities_verified == ()
    failed = evaluate_plugin(meta(caps=caps), passing(caps=caps, override={gated.id: T.FAILED}))
    assert failed.verdict is V.NON_COMPLIANT


def test_unknown_capability_is_declared_but_never_verified():
    r = evaluate_plugin(meta(caps=["teleport"]), passing(caps=["teleport"]))
    assert r.verdict is V.COMPLIANT
    assert r.capabilities_verified == ()


@pytest.mark.parametrize(("test_status", "req_status", "verdict"), [
    (T.FAILED, S.FAILED, V.NON_COMPLIANT),
    (T.ERROR, S.ERROR, V.NON_COMPLIANT),
    (T.SKIPPED, S.SKIPPED, V.INCOMPLETE),
    (None, S.NOT_RUN, V.INCOMPLETE),
])
def test_one_must_not_passed(test_status, req_status, verdict):
    r = evaluate_plugin(meta(), passing(override={UNGATED_MUST.id: test_status}, message="boom"))
    x = status_of(r, UNGATED_MUST.id)
    assert x.status is req_status
    assert r.verdict is verdict
    if req_status in (S.FAILED, S.ERROR):
        assert x.first_failure == "boom"
    else:
        assert x.reason


@pytest.mark.parametrize("test_status", [T.FAILED, T.ERROR, T.SKIPPED, None])
def test_should_never_decides_the_verdict(test_status):
    assert SHOULDS, "the registry has a SHOULD requirement"
    r = evaluate_plugin(meta(), passing(override={SHOULDS[0].id: test_status}))
    assert status_of(r, SHOULDS[0].id).status is not S.PASSED
    assert r.verdict is V.COMPLIANT


def test_failed_beats_error_beats_skip_within_a_requirement():
    rid = UNGATED_MUST.id
    base = [t for t in passing() if t.requirement != rid]

    def tests(*statuses):
        return base + [TestResult(f"t{i}", rid, "mem", s, f"m{i}") for i, s in enumerate(statuses)]

    assert status_of(evaluate_plugin(meta(), tests(T.PASSED, T.ERROR, T.FAILED)),
                     rid).first_failure == "m2"
    r = evaluate_plugin(meta(), tests(T.SKIPPED, T.ERROR, T.PASSED))
    assert status_of(r, rid).status is S.ERROR and r.verdict is V.NON_COMPLIANT
    r = evaluate_plugin(meta(), tests(T.PASSED, T.SKIPPED, T.PASSED))
    x = status_of(r, rid)
    assert x.status is S.SKIPPED and x.reason.startswith("1 of 3 tests skipped")
    assert r.verdict is V.INCOMPLETE


def test_failure_with_other_musts_unrun_is_non_compliant():
    """A run stopped early (-x): one failure, everything else never ran."""
    tests = [TestResult("t", UNGATED_MUST.id, "mem", T.FAILED, "x")]
    r = evaluate_plugin(meta(), tests, aborted="stopped early: stopping after 1 failures")
    assert r.verdict is V.NON_COMPLIANT
    others = [x for x in r.requirements if x.requirement.id != UNGATED_MUST.id
              and x.status is S.NOT_RUN]
    assert others and all("stopping after 1 failures" in x.reason for x in others)


def test_nothing_ran_is_incomplete():
    assert evaluate_plugin(meta(), []).verdict is V.INCOMPLETE


def test_unavailable_plugin_is_incomplete_and_gated_requirements_still_apply():
    m = meta(unavailable="cannot connect to dsn='x'")
    skipped = [TestResult(f"t{r.id}", r.id, "mem", T.SKIPPED, "cannot connect") for r in MUSTS]
    r = evaluate_plugin(m, skipped)
    assert r.verdict is V.INCOMPLETE
    # capabilities are unknown: a gated requirement is not silently "not applicable"
    assert status_of(r, GATED[0].id).status is S.SKIPPED
    # and even if every test had somehow passed, an unopened plugin is not compliant
    assert evaluate_plugin(m, passing(caps=[g.capability for g in GATED])).verdict \
        is V.INCOMPLETE


def test_not_applicable_marked_tests():
    rid = UNGATED_MUST.id
    base = [t for t in passing() if t.requirement != rid]
    na = TestResult("t1", rid, "mem", T.SKIPPED, "version 2 not declared", not_applicable=True)
    r = evaluate_plugin(meta(), [*base, na])
    assert status_of(r, rid).status is S.NOT_APPLICABLE
    # n/a tests do not count, the rest decides
    ok = TestResult("t2", rid, "mem", T.PASSED)
    assert status_of(evaluate_plugin(meta(), [*base, na, ok]), rid).status is S.PASSED
    bad = TestResult("t3", rid, "mem", T.SKIPPED, "no server")
    r = evaluate_plugin(meta(), [*base, na, ok, bad])
    assert status_of(r, rid).status is S.SKIPPED and r.verdict is V.INCOMPLETE


def test_other_plugins_results_are_ignored():
    r = evaluate_plugin(meta("a"), passing("a") + passing("b", override={UNGATED_MUST.id:
                                                                         T.FAILED}))
    assert r.verdict is V.COMPLIANT


def test_evaluate_and_worst():
    results = evaluate([meta("a"), meta("b")],
                       passing("a") + passing("b", override={UNGATED_MUST.id: T.SKIPPED}))
    assert [r.verdict for r in results] == [V.COMPLIANT, V.INCOMPLETE]
    assert worst(r.verdict for r in results) is V.INCOMPLETE
    assert worst([V.INCOMPLETE, V.NON_COMPLIANT, V.COMPLIANT]) is V.NON_COMPLIANT
    assert worst([]) is V.INCOMPLETE
    # a label seen only in results still gets evaluated
    extra = evaluate([meta("a")], passing("a") + passing("c"))
    assert [r.meta.label for r in extra] == ["a", "c"]
    assert [r.verdict for r in extra] == [V.COMPLIANT, V.INCOMPLETE]


class TestCollector:
    def add(self, c, nodeid, when, outcome, **kw):
        kw.setdefault("requirement", UNGATED_MUST.id)
        kw.setdefault("plugin", "mem")
        c.add_phase(nodeid, when, outcome, **kw)

    def test_phases(self):
        c = ResultCollector()
        for w in ("setup", "call", "teardown"):
            self.add(c, "ok", w, "passed", duration=0.5)
        self.add(c, "setupfail", "setup", "failed", text="E fixture broke")
        self.add(c, "setupfail", "teardown", "passed")
        self.add(c, "skip", "setup", "skipped", text="no durable")
        self.add(c, "callfail", "setup", "passed")
        self.add(c, "callfail", "call", "failed", text="E assert")
        self.add(c, "callfail", "teardown", "failed", text="E teardown")
        self.add(c, "tdfail", "setup", "passed")
        self.add(c, "tdfail", "call", "passed")
        self.add(c, "tdfail", "teardown", "failed", text="E drop failed")
        self.add(c, "xfail", "call", "skipped", text="reason", xfail="known")
        self.add(c, "unfinished", "setup", "passed")  # interrupted inside the test
        self.add(c, "own", "call", "failed", requirement=None, plugin=None)
        got = {r.nodeid: r for r in c.results()}
        assert set(got) == {"ok", "setupfail", "skip", "callfail", "tdfail", "xfail"}
        assert got["ok"].status is T.PASSED and got["ok"].duration == 1.5
        assert got["setupfail"].status is T.ERROR and "fixture broke" in got["setupfail"].message
        assert got["skip"].status is T.SKIPPED and got["skip"].message == "no durable"
        assert got["callfail"].status is T.FAILED and got["callfail"].message == "E assert"
        assert got["tdfail"].status is T.ERROR and "teardown failed" in got["tdfail"].message
        assert got["xfail"].status is T.FAILED and "xfail" in got["xfail"].message
        assert c.unattributed_failures == ["own"]
        assert set(c.failed_nodeids()) == {"setupfail", "callfail", "tdfail", "xfail"}

    def test_message_is_clipped(self):
        c = ResultCollector()
        self.add(c, "long", "call", "failed", text="\n".join(f"line {i}" for i in range(100)))
        self.add(c, "wide", "call", "failed", text="x" * 100_000)
        got = {r.nodeid: r.message for r in c.results()}
        assert got["long"].splitlines()[:20] == [f"line {i}" for i in range(20)]
        assert got["long"].endswith("(80 more lines)")
        assert len(got["wide"]) < 4100 and got["wide"].endswith("(message cut)")


def test_plugin_meta_defaults():
    m = PluginMeta("x")
    assert m.name is None and m.capabilities == frozenset()
