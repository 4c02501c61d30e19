"""Known failures: gate CI on *new* failures only (the protobuf-conformance idea).

The file lists requirement ids a plugin is known to fail, one per line::

    # rdq known failures of my-plugin
    RDQ-RT-007              # applies to every plugin under test
    sqlite:RDQ-ST-004       # applies to the plugin labelled "sqlite" only

A failure of a listed requirement does not fail the pytest run (the verdict
still says non-compliant); an unlisted failure does; a listed requirement that
now passes is *stale* and fails the run until it is removed from the file.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._requirements import REQUIREMENTS

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
    """(plugin label or None for every plugin, requirement id)."""

    def lists(self, plugin: str, requirement: str) -> bool:
        return (None, requirement) in self.entries or (plugin, requirement) in self.entries

    def labels(self) -> set[str]:
        return {p for p, _ in self.entries if p is not None}


def parse_known_failures(text: str, *, source: str = "<known failures>") -> KnownFailures:
    entries: set[tuple[str | None, str]] = set()
    for n, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
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
        entries.add((plugin, rid))
    return KnownFailures(source, frozenset(entries))


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
    """Listed requirements that now pass: they fail the run until removed."""
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
        for r in p["requirements"]:
            key = (p["label"], r["id"])
            failing = r["status"] in ("failed", "error") or any(
                t["status"] in ("failed", "error") for t in r["tests"])
            listed = known is not None and known.lists(*key)
            if failing:
                (out.listed if listed else out.unlisted).append(key)
            elif listed and r["status"] == "passed":
                out.stale.append(key)
    if known is not None:
        out.unused_labels = sorted(known.labels() - labels)
    return out


def format_known_failures(report: Mapping[str, Any], *, report_name: str = "the report") -> str:
    """The known-failures file for every failed or errored requirement of ``report``."""
    plugins = report["plugins"]
    prefix = len(plugins) > 1
    lines = [
        f"# rdq known failures, written by `rdq-compliance known-failures` from {report_name}",
        f"# kit {report['kit_version']}, verdict {report['verdict']}. Fix these, then delete "
        "their lines:",
        "# a listed requirement that passes fails the run as stale.",
    ]
    count = 0
    for p in plugins:
        for r in p["requirements"]:
            failing = r["status"] in ("failed", "error") or any(
                t["status"] in ("failed", "error") for t in r["tests"])
            if not failing:
                continue
            entry = f"{p['label']}:{r['id']}" if prefix else r["id"]
            title = _IDS[r["id"]].title if r["id"] in _IDS else ""
            lines.append(f"{entry}  # {r['status']} ({r['level']}): {title}")
            count += 1
    if not count:
        lines.append("# (no failures)")
    return "\n".join(lines) + "\n"
