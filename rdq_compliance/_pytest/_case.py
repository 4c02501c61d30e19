"""Failing cases saved to disk, and read back by ``--rdq-replay FILE``.

A case file names the test (function name without the plugin parameter), its
other parameters, the plugin label, the requirement, and the example the test
failed on. Envelopes are stored as canonical JSON objects, so a case file is
also readable evidence to attach to a bug report.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..envelope import Envelope, from_json, to_json

__all__ = ["FORMAT", "Case", "CaseError", "dump_value", "load_case", "load_value", "save_case"]

FORMAT = 1


class CaseError(Exception):
    """A replay file that cannot be used (a usage error)."""


def dump_value(value: object) -> Any:
    """A JSON form of an example argument that :func:`load_value` turns back into it."""
    if isinstance(value, Envelope):
        return {"$envelope": to_json(value)}
    if isinstance(value, bytes):
        return {"$bytes": base64.b64encode(value).decode("ascii")}
    if isinstance(value, tuple):
        return {"$tuple": [dump_value(v) for v in value]}
    if isinstance(value, list):
        return [dump_value(v) for v in value]
    if isinstance(value, dict):
        return {"$dict": [[dump_value(k), dump_value(v)] for k, v in value.items()]}
    if value is None or isinstance(value, bool | int | float | str):
        return value
    raise TypeError(f"cannot save example value {value!r} of type {type(value).__name__}")


def load_value(data: Any) -> Any:
    if isinstance(data, list):
        return [load_value(v) for v in data]
    if isinstance(data, dict):
        if "$envelope" in data:
            return from_json(data["$envelope"])
        if "$bytes" in data:
            return base64.b64decode(data["$bytes"])
        if "$tuple" in data:
            return tuple(load_value(v) for v in data["$tuple"])
        if "$dict" in data:
            return {load_value(k): load_value(v) for k, v in data["$dict"]}
        raise CaseError(f"unknown value tag in replay file: {sorted(data)!r}")
    return data


@dataclass(frozen=True)
class Case:
    test: str
    """Test function name (``item.originalname``)."""
    params: dict[str, str]
    """Parameter ids of the test other than the plugin label."""
    plugin: str
    requirement: str
    check: str | None
    """Name of the property function inside the test, when the case is an example."""
    example: dict[str, Any] | None
    """Keyword arguments of that property function, as :func:`dump_value` JSON."""
    path: Path | None = None

    def example_kwargs(self) -> dict[str, Any]:
        return {k: load_value(v) for k, v in (self.example or {}).items()}


def save_case(
    directory: Path,
    *,
    test: str,
    params: Mapping[str, str],
    plugin: str,
    requirement: str,
    check: str | None,
    example: Mapping[str, Any] | None,
    envelopes: list[Any],
    message: str,
    meta: Mapping[str, Any],
) -> Path:
    """Write the case; the file name is ``<test>-<hash of the case>.json``."""
    body = {
        "test": test,
        "params": dict(params),
        "plugin": plugin,
        "requirement": requirement,
        "check": check,
        "example": None if example is None else {k: dump_value(v) for k, v in example.items()},
        "envelopes": envelopes,
    }
    digest = hashlib.sha256(
        json.dumps(body, sort_keys=True, ensure_ascii=False).encode("utf-8")
    ).hexdigest()[:12]
    doc = {"format": FORMAT, **body, "message": message, **meta}
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{test}-{digest}.json"
    path.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def load_case(path: Path) -> Case:
    """Read a replay file; :class:`CaseError` says what is wrong with it."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CaseError(f"--rdq-replay={str(path)!r}: no such file") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CaseError(
            f"--rdq-replay={str(path)!r} is not a case file saved by the kit ({exc})"
        ) from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise CaseError(
            f"--rdq-replay={str(path)!r} is not a case file of format {FORMAT} saved by the kit"
        )
    try:
        test, plugin, requirement = doc["test"], doc["plugin"], doc["requirement"]
        params, check, example = doc.get("params", {}), doc.get("check"), doc.get("example")
    except KeyError as exc:
        raise CaseError(f"--rdq-replay={str(path)!r} lacks the key {exc.args[0]!r}") from None
    if not (
        isinstance(test, str)
        and isinstance(plugin, str)
        and isinstance(requirement, str)
        and isinstance(params, dict)
        and all(isinstance(v, str) for v in params.values())
        and (check is None or isinstance(check, str))
        and (example is None or isinstance(example, dict))
    ):
        raise CaseError(f"--rdq-replay={str(path)!r} has malformed test/plugin/params/example")
    return Case(test, params, plugin, requirement, check, example, path)
