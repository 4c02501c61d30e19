"""From test results to requirement statuses and verdicts (issue 4 §2).

The rules, per plugin:

- a requirement gated on a capability the plugin does not declare is
  ``not-applicable`` (its tests need not have run);
- otherwise: ``failed`` if any of its tests failed, else ``error`` if any errored,
  else ``not-run`` if none reported, else ``passed`` if all passed, else ``skipped``
  (one skipped test is enough: a partly checked requirement is not passed);
- verdict ``non-compliant`` if an applicable MUST failed or errored, else
  ``incomplete`` if an applicable MUST is not passed or the plugin could not be
  opened, else ``compliant``. SHOULD requirements never decide the verdict.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

from .._requirements import REQUIREMENTS, Level, Requirement
from ._model import PluginMeta, RequirementStatus, TestResult, TestStatus, Verdict

__all__ = [
    "PluginResult", "RequirementResult", "evaluate", "evaluate_plugin", "plugin_verdict", "worst",
]

_S = RequirementStatus
_SEVERITY = {Verdict.COMPLIANT: 0, Verdict.INCOMPLETE: 1, Verdict.NON_COMPLIANT: 2}


@dataclass(frozen=True, slots=True)
class RequirementResult:
    requirement: Requirement
    status: RequirementStatus
    reason: str | None
    """Why it is skipped / not-run / not-applicable."""
    first_failure: str | None
    tests: tuple[TestResult, ...]


@dataclass(frozen=True, slots=True)
class PluginResult:
    meta: PluginMeta
    requirements: tuple[RequirementResult, ...]
    verdict: Verdict
    capabilities_verified: tuple[str, ...]
    """Declared capabilities whose every gated MUST requirement passed."""


def worst(verdicts: Iterable[Verdict]) -> Verdict:
    """The worst verdict; no plugin at all proves nothing, so that is incomplete."""
    found = list(verdicts)
    if not found:
        return Verdict.INCOMPLETE
    return max(found, key=_SEVERITY.__getitem__)


DESELECTED = "deselected: its tests were left out by -k, -m or the test ids given"
NOT_COLLECTED = "not collected: the run named other tests"


def in_other_shards(shards: Collection[int], k: int, n: int) -> str:
    """The reason of a requirement whose tests all run in other shards than this one."""
    which = ", ".join(f"{s}/{n}" for s in sorted(shards))
    return (f"in other shards: its tests run in shard {which}, this run is shard {k}/{n} "
            f"(--rdq-shard); `rdq-compliance merge` of the {n} shards' reports gives the "
            "verdict")


def _requirement_result(
    req: Requirement, meta: PluginMeta, tests: Sequence[TestResult], aborted: str | None,
    deselected: Collection[tuple[str, str]] = (),
    other_shards: Mapping[tuple[str, str], str] | None = None,
) -> RequirementResult:
    tests = tuple(sorted(tests, key=lambda t: t.nodeid))
    if req.capability is not None and meta.unavailable is None and (
        req.capability not in meta.capabilities
    ):
        reason = f"plugin declares no {req.capability!r} capability"
        return RequirementResult(req, _S.NOT_APPLICABLE, reason, None, tests)
    counted = [t for t in tests if not t.not_applicable]
    if tests and not counted:
        return RequirementResult(req, _S.NOT_APPLICABLE, tests[0].message, None, tests)
    by_status = {s: [t for t in counted if t.status is s] for s in TestStatus}
    if by_status[TestStatus.FAILED]:
        return RequirementResult(req, _S.FAILED, None, by_status[TestStatus.FAILED][0].message,
                                 tests)
    if by_status[TestStatus.ERROR]:
        return RequirementResult(req, _S.ERROR, None, by_status[TestStatus.ERROR][0].message,
                                 tests)
    if not counted:
        key = (meta.label, req.id)
        why = (other_shards or {}).get(key) or (
            DESELECTED if key in deselected else NOT_COLLECTED)
        reason = meta.unavailable or aborted or why
        return RequirementResult(req, _S.NOT_RUN, reason, None, tests)
    skipped = by_status[TestStatus.SKIPPED]
    if not skipped:
        return RequirementResult(req, _S.PASSED, None, None, tests)
    reason = skipped[0].message or "skipped"
    if len(skipped) < len(counted):
        reason = f"{len(skipped)} of {len(counted)} tests skipped: {reason}"
    return RequirementResult(req, _S.SKIPPED, reason, None, tests)


def plugin_verdict(
    statuses: Iterable[tuple[Level, RequirementStatus]], *, opened: bool
) -> Verdict:
    """THE verdict rule, used for a run and by ``verify`` alike: an applicable MUST
    requirement failed or errored -> non-compliant; else one not passed, or the plugin
    was not opened -> incomplete; else compliant. SHOULD requirements never decide."""
    musts = [s for level, s in statuses
             if level is Level.MUST and s is not _S.NOT_APPLICABLE]
    if any(s in (_S.FAILED, _S.ERROR) for s in musts):
        return Verdict.NON_COMPLIANT
    if not opened or any(s is not _S.PASSED for s in musts):
        return Verdict.INCOMPLETE
    return Verdict.COMPLIANT


def evaluate_plugin(
    meta: PluginMeta,
    tests: Iterable[TestResult],
    *,
    requirements: Sequence[Requirement] = REQUIREMENTS,
    aborted: str | None = None,
    deselected: Collection[tuple[str, str]] = (),
    other_shards: Mapping[tuple[str, str], str] | None = None,
) -> PluginResult:
    """Statuses of every (non-retired) requirement for one plugin, and its verdict.

    ``tests`` of other plugins and of unknown requirement ids are ignored.
    """
    by_req: dict[str, list[TestResult]] = {}
    for t in tests:
        if t.plugin == meta.label:
            by_req.setdefault(t.requirement, []).append(t)
    results = tuple(
        _requirement_result(req, meta, by_req.get(req.id, ()), aborted, deselected,
                            other_shards)
        for req in requirements
        if not req.retired
    )
    verdict = plugin_verdict(
        ((r.requirement.level, r.status) for r in results), opened=meta.unavailable is None
    )
    verified = []
    for cap in sorted(meta.capabilities):
        # A gated check that does not apply to this run (the upgrade check without
        # --rdq-upgrade-check) neither verifies nor refutes the capability.
        gated = [r for r in results
                 if r.requirement.capability == cap and r.requirement.level is Level.MUST
                 and r.status is not _S.NOT_APPLICABLE]
        if gated and all(r.status is _S.PASSED for r in gated):
            verified.append(cap)
    return PluginResult(meta, results, verdict, tuple(verified))


def evaluate(
    plugins: Sequence[PluginMeta],
    tests: Sequence[TestResult],
    *,
    requirements: Sequence[Requirement] = REQUIREMENTS,
    aborted: str | None = None,
    deselected: Collection[tuple[str, str]] = (),
    other_shards: Mapping[tuple[str, str], str] | None = None,
) -> list[PluginResult]:
    """:func:`evaluate_plugin` for each plugin, plus any label seen only in results.
    ``deselected``: (plugin label, requirement id) of kit tests deselected in the run;
    ``other_shards``: those whose tests run in other shards, with the reason to give."""
    metas = list(plugins)
    known = {m.label for m in metas}
    for t in tests:
        if t.plugin not in known:
            known.add(t.plugin)
            # results of a plugin the run did not describe: its declared name, versions
            # and capabilities are unknown, so it cannot be called compliant
            metas.append(PluginMeta(label=t.plugin,
                                    unavailable="the kit recorded nothing about this plugin"))
    return [
        evaluate_plugin(m, tests, requirements=requirements, aborted=aborted,
                        deselected=deselected, other_shards=other_shards)
        for m in metas
    ]
