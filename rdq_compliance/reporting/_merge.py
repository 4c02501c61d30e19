"""Merge the reports of ``--rdq-shard K/N`` runs into the report of the whole run.

Each report must verify (its digest) and be a shard of the same run: the same kit version,
fixture corpus, profile, seed, N and plugins (label, declared name, version, capabilities,
envelope versions), each K once. The merged report is built from the union of the
shards' test results with the verdict rule of :mod:`._verdict` and a fresh digest, so its
verdict is what one unsharded run would have given. A missing shard leaves every
requirement that applies with a skipped test "shard K/N missing": the merged verdict is
then ``incomplete`` at best (``non-compliant`` if a present shard failed).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

from ._model import PluginMeta, RunMeta, TestResult, TestStatus
from ._report import Report, build_report
from ._symptom import Symptom, cause_key, cause_signature
from ._verdict import evaluate

__all__ = ["MergeError", "merge_reports", "shard_note", "shard_of"]

_NOTE = re.compile(r"^shard (\d+)/(\d+) \(--rdq-shard\): ")


def shard_note(k: int, n: int) -> str:
    """The note a shard's report carries (its ``notes``): how merge recognises it."""
    return (f"shard {k}/{n} (--rdq-shard): the tests of the other shards ran elsewhere; "
            "`rdq-compliance merge` combines the shards' reports into the run's verdict")


def shard_of(report: Mapping[str, Any]) -> tuple[int, int] | None:
    for note in report.get("notes") or ():
        m = _NOTE.match(str(note))
        if m:
            return int(m.group(1)), int(m.group(2))
    return None


class MergeError(Exception):
    """The reports are not the shards of one run."""


def _plugin_key(p: Mapping[str, Any]) -> tuple[Any, ...]:
    return (p["label"], p["name"], p["version"], tuple(p["capabilities"]),
            tuple(p["envelope_versions"]))


def _check(reports: Sequence[tuple[str, Mapping[str, Any]]]) -> tuple[int, list[int]]:
    """N and the shard numbers present; MergeError naming the first mismatch."""
    first_name, first = reports[0]
    seen: dict[int, str] = {}
    n_of_run = None
    for name, r in reports:
        shard = shard_of(r)
        if shard is None:
            raise MergeError(f"{name}: not the report of a --rdq-shard run (no 'shard K/N' "
                             "note)")
        k, n = shard
        n_of_run = n if n_of_run is None else n_of_run
        if n != n_of_run:
            raise MergeError(f"{name}: shard {k}/{n}, but {first_name} is a shard of "
                             f"{n_of_run}; expected shards of one run")
        if k in seen:
            raise MergeError(f"{name}: shard {k}/{n} again (also {seen[k]}); expected each "
                             "shard once")
        seen[k] = name
        for key in ("kit_version", "fixture_hash", "profile", "seed"):
            if r.get(key) != first.get(key):
                raise MergeError(f"{name}: {key}={r.get(key)!r}, but {first_name} has "
                                 f"{key}={first.get(key)!r}; expected shards of one run")
        mine = [_plugin_key(p) for p in r["plugins"]]
        if mine != [_plugin_key(p) for p in first["plugins"]]:
            raise MergeError(f"{name}: plugins {mine!r} differ from {first_name}'s; expected "
                             "shards of one run")
    assert n_of_run is not None
    return n_of_run, sorted(seen)


def _examples(p: Mapping[str, Any]) -> tuple[dict[str, str], dict[str, str]]:
    """A shard's cause examples by the node ids the causes list and by signature: the
    diff of each cause's first member, which is also the whole run's first member of
    that cause when it is in this shard (the order of the failures is the same). By
    node id first: a member may sit in a cause of another key (an empty value read as
    null joins the loss at its place)."""
    by_test: dict[str, str] = {}
    by_signature: dict[str, str] = {}
    for c in p.get("causes") or []:
        for nodeid in c.get("tests") or ():
            by_test[str(nodeid)] = str(c["example"])
        if "signature" in c:
            by_signature[str(c["signature"])] = str(c["example"])
    return by_test, by_signature


def _symptom(nodeid: str, c: Mapping[str, Any],
             examples: tuple[Mapping[str, str], Mapping[str, str]]) -> Symptom:
    """A test's cause as the shard recorded it, with everything the grouping reads (the
    class of difference, the triggers, the nature of the change: fields a report
    written before them lacks, read as "")."""
    found = Symptom.from_mapping(c, diff="")
    by_test, by_signature = examples
    example = by_test.get(nodeid) or by_signature.get(cause_signature(cause_key(found)), "")
    return replace(found, diff=example)


def _tests(label: str, p: Mapping[str, Any]) -> list[TestResult]:
    examples = _examples(p)
    out = []
    for r in p["requirements"]:
        for t in r["tests"]:
            c = t.get("cause")
            out.append(TestResult(
                nodeid=t["nodeid"], requirement=r["id"], plugin=label,
                status=TestStatus(t["status"]), message=t["message"],
                duration=t["duration_ms"] / 1000, not_applicable=t["not_applicable"],
                cause=None if c is None else _symptom(str(t["nodeid"]), c, examples)))
    return out


def _moment(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def merge_reports(reports: Sequence[tuple[str, Mapping[str, Any]]]) -> Report:
    """The whole run's report from its shards' (name, verified report) pairs."""
    if not reports:
        raise MergeError("no report to merge")
    n, present = _check(reports)
    first = reports[0][1]
    tests: list[TestResult] = []
    for _, r in reports:
        for p in r["plugins"]:
            tests += _tests(str(p["label"]), p)
    missing = [k for k in range(1, n + 1) if k not in present]
    for k in missing:  # its tests could have been in any requirement: none is known passed
        for p in first["plugins"]:
            for r in p["requirements"]:
                tests.append(TestResult(
                    nodeid=f"rdq-merge::shard-{k}-of-{n}-missing[{p['label']}-{r['id']}]",
                    requirement=r["id"], plugin=str(p["label"]), status=TestStatus.SKIPPED,
                    message=f"shard {k}/{n} missing: the results of its tests are unknown"))
    aborted = "; ".join(f"{name}: {r['aborted']}" for name, r in reports if r["aborted"])
    notes = [str(x) for _, r in reports for x in r.get("notes") or ()
             if not _NOTE.match(str(x))]
    notes = list(dict.fromkeys(notes))
    notes.append(f"merged from shards {', '.join(map(str, present))} of {n}"
                 + (f"; missing: {', '.join(map(str, missing))}" if missing else ""))
    metas = tuple(
        PluginMeta(label=str(p["label"]), name=p["name"], version=p["version"],
                   envelope_versions=frozenset(p["envelope_versions"]),
                   capabilities=frozenset(p["capabilities"]), unavailable=p["unavailable"])
        for p in first["plugins"])
    meta = RunMeta(
        kit_version=str(first["kit_version"]), fixture_hash=str(first["fixture_hash"]),
        profile=str(first["profile"]), seed=int(first["seed"]),
        started_at=min(_moment(str(r["started_at"])) for _, r in reports),
        duration=max(int(r["duration_ms"]) for _, r in reports) / 1000,  # in parallel
        plugins=metas, aborted=aborted or None, notes=tuple(notes),
        upgraded_from=first.get("upgraded_from"), run_token=None)
    return build_report(meta, evaluate(metas, tests, aborted=aborted or None),
                        known_failures={(p["label"], r["id"]): True
                                        for _, rep in reports for p in rep["plugins"]
                                        for r in p["requirements"] if r["known_failure"]})
