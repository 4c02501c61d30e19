"""The JSON conformance report: build, digest, write, load, verify.

The report is plain JSON with no floats (durations are integer milliseconds, as
everywhere in rdq), so its canonical form is the same in every language:
``json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)``
encoded as UTF-8. ``digest`` is ``"sha256:" + hex`` over the canonical form of
the report without ``digest``. It detects a hand edit or a damaged file; it is
not a signature (anyone can recompute it).
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
from collections import Counter
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import Any

from .._requirements import Level
from ..envelope._deep import SURROGATE as _SURROGATE
from ._causes import SPEC_URL, causes_of, explained_by
from ._model import RequirementStatus, RunMeta, TestResult
from ._outage import outage_lines
from ._symptom import fallback_symptom
from ._verdict import PluginResult, plugin_verdict, worst

__all__ = [
    "SCHEMA_VERSION",
    "ReportError",
    "build_report",
    "canonical_json",
    "compute_digest",
    "load_report",
    "load_schema",
    "verify_report",
    "write_json",
]

SCHEMA_VERSION = 1
Report = dict[str, Any]


class ReportError(Exception):
    """A report that cannot be read (``unreadable``) or is not a valid report."""

    def __init__(self, message: str, *, unreadable: bool = False) -> None:
        super().__init__(message)
        self.unreadable = unreadable


def _ms(seconds: float) -> int:
    return max(0, round(seconds * 1000))


def _rfc3339(moment: datetime) -> str:
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _counts(statuses: Sequence[str]) -> dict[str, int]:
    found = Counter(statuses)
    return {s.value: found.get(s.value, 0) for s in RequirementStatus}


def _test_json(t: TestResult) -> dict[str, Any]:
    return {
        "nodeid": t.nodeid,
        "status": t.status.value,
        "duration_ms": _ms(t.duration),
        "message": t.message,
        "not_applicable": t.not_applicable,
        "cause": None if t.cause is None else {
            "pointer": t.cause.pointer, "pattern": t.cause.pattern, "kind": t.cause.kind,
            "clause": t.cause.clause, "summary": t.cause.summary,
            "difference": t.cause.difference, "triggers": t.cause.triggers,
            "change": t.cause.change,
        },
    }


_FAILING = ("failed", "error")


def _plugin_json(p: PluginResult, known: Mapping[tuple[str, str], bool]) -> dict[str, Any]:
    m = p.meta
    # Every failed or errored test is in a cause (issue 21 §1): its own symptom, else one
    # made from its message.
    causes, index = causes_of(
        (t.nodeid, r.requirement.id, t.cause or fallback_symptom(t.message))
        for r in p.requirements for t in r.tests if t.status.value in _FAILING
    )
    explained = explained_by(causes, index, {
        r.requirement.id: [t.nodeid for t in r.tests if t.status.value in _FAILING]
        for r in p.requirements if r.status.value in _FAILING
    })
    requirements: list[dict[str, Any]] = [
        {
            "id": r.requirement.id,
            "level": r.requirement.level.value,
            "title": r.requirement.title,
            "clauses": list(r.requirement.clauses),
            "suite": r.requirement.suite,
            "capability": r.requirement.capability,
            "status": r.status.value,
            "reason": r.reason,
            "first_failure": r.first_failure,
            "known_failure": known.get((m.label, r.requirement.id), False),
            "explained_by": explained.get(r.requirement.id),
            "causes": sorted({index[t.nodeid] + 1 for t in r.tests if t.nodeid in index}),
            "tests": [_test_json(t) for t in r.tests],
        }
        for r in p.requirements
    ]
    return {
        "label": m.label,
        "name": m.name,
        "version": m.version,
        "envelope_versions": sorted(m.envelope_versions),
        "capabilities": sorted(m.capabilities),
        "capabilities_verified": list(p.capabilities_verified),
        "unavailable": m.unavailable,
        "verdict": p.verdict.value,
        "counts": _counts([r.status.value for r in p.requirements]),
        "requirements": requirements,
        "causes": causes,
        "failures": len(index),
    }


def build_report(
    run: RunMeta,
    plugins: Sequence[PluginResult],
    *,
    known_failures: Mapping[tuple[str, str], bool] | None = None,
) -> Report:
    """The report of a run, ``digest`` included. ``known_failures`` maps
    (plugin label, requirement id) to True for requirements listed as known failures."""
    known = known_failures or {}
    plugin_docs = [_plugin_json(p, known) for p in plugins]
    report: Report = {
        "schema_version": SCHEMA_VERSION,
        "kit": "rdq-compliance",
        "kit_version": run.kit_version,
        "fixture_hash": run.fixture_hash,
        "profile": run.profile,
        "seed": run.seed,
        "started_at": _rfc3339(run.started_at),
        "duration_ms": _ms(run.duration),
        "run_token": run.run_token,
        "aborted": run.aborted,
        "notes": [*run.notes, *outage_lines(plugin_docs)],
        "spec": run.spec_url or SPEC_URL,
        "plugins": plugin_docs,
        "counts": _counts([r["status"] for p in plugin_docs for r in p["requirements"]]),
        "verdict": worst(p.verdict for p in plugins).value,
    }
    if run.upgraded_from is not None:  # only then: other reports keep their exact form
        report["upgraded_from"] = run.upgraded_from
    report = _scrub(report)
    report["digest"] = compute_digest(report)
    return report




def _scrub(value: Any) -> Any:
    """Lone surrogates (a Python plugin can put them in any text) cannot be written
    as UTF-8: they become U+FFFD, so that the report is always valid JSON text."""
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [_scrub(v) for v in value]
    if isinstance(value, dict):
        return {_scrub(k): _scrub(v) for k, v in value.items()}
    return value


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False)


def compute_digest(report: Mapping[str, Any]) -> str:
    """``sha256:<hex>`` over the canonical JSON of ``report`` without its ``digest``."""
    body = {k: v for k, v in report.items() if k != "digest"}
    return "sha256:" + hashlib.sha256(canonical_json(body).encode("utf-8")).hexdigest()


def write_json(path: str | os.PathLike[str], value: Any) -> None:
    """Write ``value`` as pretty JSON, atomically (a reader never sees half a report)."""
    target = Path(path)
    text = json.dumps(value, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    # Not tempfile.mkstemp: its file is 0600 whatever the umask, and os.replace keeps
    # that mode; a report is an ordinary file (0644 under umask 022).
    tmp = target.parent / f".{target.name}.{secrets.token_hex(6)}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _reject_constant(name: str) -> float:
    raise ValueError(f"{name} is not JSON")


def load_report(path: str | os.PathLike[str]) -> Report:
    """Read a report file; :class:`ReportError` (``unreadable``) when that fails."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise ReportError(f"cannot read report path={str(path)!r}: {e}", unreadable=True) from None
    try:
        value = json.loads(text, parse_constant=_reject_constant)
    except ValueError as e:
        raise ReportError(
            f"report path={str(path)!r} is not JSON ({e}); expected a file written by "
            "--rdq-report", unreadable=True) from None
    if not isinstance(value, dict):
        raise ReportError(f"report path={str(path)!r} holds a JSON {type(value).__name__}, "
                          "expected an object written by --rdq-report")
    return value


_REQUIRED = ("schema_version", "kit_version", "fixture_hash", "plugins", "verdict", "digest")


def verify_report(report: Mapping[str, Any]) -> str:
    """Check the report's shape and digest; return the digest, raise :class:`ReportError`."""
    missing = [k for k in _REQUIRED if k not in report]
    if missing:
        raise ReportError(f"not an rdq report: missing {', '.join(missing)}")
    if report["schema_version"] != SCHEMA_VERSION:
        raise ReportError(f"schema_version={report['schema_version']!r} is not supported; "
                          f"this kit reads version {SCHEMA_VERSION}")
    _check_schema(report)
    recorded = report["digest"]
    try:
        computed = compute_digest(report)
    except (TypeError, ValueError) as e:
        raise ReportError(f"report cannot be canonicalized: {e}") from None
    if recorded != computed:
        raise ReportError(
            f"digest mismatch: recorded digest={recorded!r}, computed {computed!r}: the report "
            "was changed after the kit wrote it; re-run the kit to get a genuine report")
    _check_verdicts(report)
    return computed


def _check_schema(report: Mapping[str, Any]) -> None:
    """The report's shape, by the JSON Schema the kit ships (``report.schema.json``)."""
    import jsonschema  # only ``verify`` needs it: not loaded by a kit run

    validator = jsonschema.Draft202012Validator(
        load_schema(), format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
    )
    error = jsonschema.exceptions.best_match(validator.iter_errors(report))
    if error is not None:
        where = "/" + "/".join(str(p) for p in error.absolute_path)
        raise ReportError(f"not a valid rdq report at {where}: {error.message} (expected what "
                          "report.schema.json of this kit describes)")


def _check_verdicts(report: Mapping[str, Any]) -> None:
    """The verdicts must follow from the statuses (a digest alone is easy to recompute)."""
    try:
        found = []
        for p in report["plugins"]:
            expected = plugin_verdict(
                ((Level(r["level"]), RequirementStatus(r["status"])) for r in p["requirements"]),
                opened=p["unavailable"] is None,
            )
            if p["verdict"] != expected.value:
                raise ReportError(f"plugin label={p['label']!r}: verdict={p['verdict']!r} does "
                                  f"not follow from its requirement statuses ({expected.value})")
            found.append(expected)
    except (KeyError, TypeError, ValueError) as e:
        raise ReportError(f"not an rdq report: malformed plugins ({e!r})") from None
    if report["verdict"] != worst(found).value:
        raise ReportError(f"verdict={report['verdict']!r} does not follow from the plugin "
                          f"verdicts ({worst(found).value})")


def load_schema() -> dict[str, Any]:
    """The JSON Schema of the report (shipped as ``report.schema.json``)."""
    text = resources.files(__package__).joinpath("report.schema.json").read_text("utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema
