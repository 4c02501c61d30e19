"""Known failures: gate CI on *new* failures only (the protobuf-conformance idea).

The file lists requirement ids a plugin is known to fail, one per line, each
optionally with the signature of the cause it fails by (``cause=`` and the
``signature`` of a cause in the report; ``rdq-compliance known-failures`` writes them)::

    # rdq known failures of my-plugin
    RDQ-RT-007                      # any failure of it, for every plugin under test
    sqlite:RDQ-ST-004               # the plugin labelled "sqlite" only
    RDQ-RT-005 cause=c1f0e2d3c4b5a  # only failures by this cause

A failure of a listed requirement does not fail the pytest run (the verdict
still says non-compliant); an unlisted failure does, and so does a failure of a
requirement listed with causes by a cause not listed (a second, new defect). A
listed requirement that ran and passed is *stale* and fails the run until it is
removed from the file; one this run did not exercise (another profile, -k, a
capability not declared) is *not checked*, which fails nothing.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._requirements import REQUIREMENTS
from ._causes import short_pointer

__all__ = [
    "GateOutcome",
    "KnownFailures",
    "KnownFailuresError",
    "format_known_failures",
    "gate",
    "load_known_failures",
    "parse_known_failures",
]

_IDS = {r.id: r for r in REQUIREMENTS}


class KnownFailuresError(ValueError):
    """The known-failures file is unreadable or names something that does not exist."""


@dataclass(frozen=True, slots=True)
class KnownFailures:
    source: str
    entries: frozenset[tuple[str | None, str]]
    """(plugin label or None for every plugin, requirement id): any failure of it."""
    causes: frozenset[tuple[str | None, str, str]] = frozenset()
    """(plugin label or None, requirement id, cause signature): failures by that cause."""

    def lists(self, plugin: str, requirement: str, signatures: Iterable[str] = ()) -> bool:
        """Whether a failure of ``requirement`` by the causes ``signatures`` is known:
        the requirement is listed without a cause, or with every one of them."""
        if (None, requirement) in self.entries or (plugin, requirement) in self.entries:
            return True
        wanted = set(signatures)
        return bool(wanted) and wanted <= self.signatures(plugin, requirement)

    def signatures(self, plugin: str, requirement: str) -> set[str]:
        return {sig for p, rid, sig in self.causes
                if rid == requirement and p in (None, plugin)}

    def names(self, plugin: str, requirement: str) -> bool:
        """Whether any line names ``requirement`` for ``plugin``."""
        return ((None, requirement) in self.entries or (plugin, requirement) in self.entries
                or bool(self.signatures(plugin, requirement)))

    def keys(self) -> set[tuple[str | None, str]]:
        return set(self.entries) | {(p, rid) for p, rid, _ in self.causes}

    def labels(self) -> set[str]:
        return {p for p, _ in self.keys() if p is not None}


_SIGNATURE = re.compile(r"c[0-9a-f]{12}")
_CAUSE = re.compile(r"\s+cause=(\S*)$")


def parse_known_failures(text: str, *, source: str = "<known failures>") -> KnownFailures:
    entries: set[tuple[str | None, str]] = set()
    causes: set[tuple[str | None, str, str]] = set()
    for n, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        signature: str | None = None
        found = _CAUSE.search(line)
        if found is not None:
            signature, line = found.group(1), line[:found.start()].strip()
            if not _SIGNATURE.fullmatch(signature):
                raise KnownFailuresError(
                    f"{source}:{n}: cause={signature!r} is not a cause signature; expected "
                    "'c' and 12 hex digits, the \"signature\" of a cause in the report")
        plugin: str | None = None
        rid = line
        if ":" in line:
            plugin, rid = (part.strip() for part in line.rsplit(":", 1))
            if not plugin:
                raise KnownFailuresError(
                    f"{source}:{n}: entry={line!r} has an empty plugin label; expected "
                    "REQUIREMENT-ID or PLUGIN:REQUIREMENT-ID")
        if rid not in _IDS:
            hint = " (ids are upper case)" if rid.upper() in _IDS else ""
            raise KnownFailuresError(
                f"{source}:{n}: unknown requirement id={rid!r}{hint}; expected one of "
                f"{', '.join(sorted(_IDS))} (optionally prefixed with PLUGIN:)")
        if _IDS[rid].retired:
            raise KnownFailuresError(
                f"{source}:{n}: requirement id={rid!r} is retired and can no longer fail; "
                "remove the line")
        if signature is None:
            entries.add((plugin, rid))
        else:
            causes.add((plugin, rid, signature))
    return KnownFailures(source, frozenset(entries), frozenset(causes))


def load_known_failures(path: str | os.PathLike[str]) -> KnownFailures:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise KnownFailuresError(f"cannot read known-failures file path={str(path)!r}: {e}") \
            from None
    return parse_known_failures(text, source=str(path))


@dataclass
class GateOutcome:
    listed: list[tuple[str, str]] = field(default_factory=list)
    """(plugin, requirement) that failed and are listed: they do not fail the run."""
    unlisted: list[tuple[str, str]] = field(default_factory=list)
    """Failures that are not listed: they fail the run."""
    stale: list[tuple[str, str]] = field(default_factory=list)
    """Listed requirements that ran and passed: they fail the run until removed."""
    not_checked: list[tuple[str, str]] = field(default_factory=list)
    """Listed requirements this run did not exercise (skipped, not run, not applicable,
    deselected): nothing to say about them; they fail nothing."""
    new_causes: dict[tuple[str, str], list[str]] = field(default_factory=dict)
    """Unlisted failures of requirements listed with causes: the signatures not listed."""
    unused_labels: list[str] = field(default_factory=list)
    """PLUGIN: prefixes naming no plugin of this run (ignored)."""


def gate(report: Mapping[str, Any], known: KnownFailures | None) -> GateOutcome:
    """Sort the failures of a report into listed and unlisted, and find stale entries.

    A requirement counts as failing when any of its tests failed or errored (even a
    requirement that does not apply: such a test failure is still a failed test)."""
    out = GateOutcome()
    labels = set()
    for p in report["plugins"]:
        labels.add(p["label"])
        causes = p.get("causes") or []
        for r in p["requirements"]:
            key = (p["label"], r["id"])
            failing = r["status"] in ("failed", "error") or any(
                t["status"] in ("failed", "error") for t in r["tests"])
            signatures = [causes[n - 1]["signature"] for n in r.get("causes") or ()
                          if 0 < n <= len(causes) and "signature" in causes[n - 1]]
            listed = known is not None and known.lists(*key, signatures)
            if failing:
                (out.listed if listed else out.unlisted).append(key)
                if not listed and known is not None and known.signatures(*key):
                    out.new_causes[key] = sorted(set(signatures) - known.signatures(*key))
            elif known is not None and known.names(*key):
                (out.stale if r["status"] == "passed" else out.not_checked).append(key)
        if known is not None:
            present = {r["id"] for r in p["requirements"]}
            out.not_checked.extend((p["label"], rid) for q, rid in sorted(
                known.keys(), key=lambda k: (k[0] or "", k[1]))
                if q in (None, p["label"]) and rid not in present)
    if known is not None:
        out.unused_labels = sorted(known.labels() - labels)
        out.not_checked = sorted(set(out.not_checked))
    return out


def format_known_failures(report: Mapping[str, Any], *, report_name: str = "the report") -> str:
    """The known-failures file for every failed or errored requirement of ``report``:
    one line per requirement and cause it fails by (its signature), so that a second,
    new defect in the same requirement is not excused."""
    plugins = report["plugins"]
    prefix = len(plugins) > 1
    lines = [
        f"# rdq known failures, written by `rdq-compliance known-failures` from {report_name}",
        f"# kit {report['kit_version']}, verdict {report['verdict']}. Fix these, then delete "
        "their lines:",
        "# a listed requirement that passes fails the run as stale; a failure by a cause",
        "# not listed (cause=signature from the report) is new and fails the run.",
    ]
    count = 0
    for p in plugins:
        causes = p.get("causes") or []
        for r in p["requirements"]:
            failing = r["status"] in ("failed", "error") or any(
                t["status"] in ("failed", "error") for t in r["tests"])
            if not failing:
                continue
            entry = f"{p['label']}:{r['id']}" if prefix else r["id"]
            title = _IDS[r["id"]].title if r["id"] in _IDS else ""
            found = [causes[n - 1] for n in r.get("causes") or ()
                     if 0 < n <= len(causes) and "signature" in causes[n - 1]]
            if not found:  # a report without causes: the requirement, whatever the cause
                lines.append(f"{entry}  # {r['status']} ({r['level']}): {title}")
            for c in found:
                what = " ".join(f"{short_pointer(str(c['pointer']))} {c['summary']}".split())[:120]
                lines.append(f"{entry} cause={c['signature']}  # {r['status']} "
                             f"({r['level']}): {title}; cause: {what}")
            count += 1
    if not count:
        lines.append("# (no failures)")
    return "\n".join(lines) + "\n"
