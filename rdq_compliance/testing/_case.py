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
import re
import shlex
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..envelope._codec import from_json, to_json
from ..envelope._deep import dumps as deep_dumps
from ..envelope._deep import loads as deep_loads
from ..envelope._model import Envelope
from ..storage._discovery import STDIO, split_option_key

__all__ = [
    "FORMAT", "MASKED", "Case", "CaseError", "dump_value", "load_case", "load_value",
    "mask_secrets", "replay_command", "save_case",
]

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
    """Write the case; the file name is ``<test>-<hash>.json``, the hash taken over the
    case, the failure message and the run's meta (profile, seed, ...): two different
    failures never share a file, the same failure of the same run rewrites its own."""
    body = {
        "test": test,
        "params": dict(params),
        "plugin": plugin,
        "requirement": requirement,
        "check": check,
        "example": None if example is None else {k: dump_value(v) for k, v in example.items()},
        "envelopes": envelopes,
    }
    # deep_dumps: json.dumps's text, also for values nested past its recursion limit.
    hashed = {**body, "message": message, "meta": dict(meta)}
    digest = hashlib.sha256(
        deep_dumps(hashed, sort_keys=True, allow_nan=True).encode("utf-8")
    ).hexdigest()[:16]
    doc = {"format": FORMAT, **body, "message": message, **meta}
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{test}-{digest}.json"
    path.write_text(deep_dumps(doc, pretty=True, allow_nan=True) + "\n", encoding="utf-8")
    return path


def load_case(path: Path) -> Case:
    """Read a replay file; :class:`CaseError` says what is wrong with it."""
    try:
        doc = deep_loads(path.read_text(encoding="utf-8"))
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


# -- the command that replays a case ---------------------------------------------

MASKED = "***"
# An option whose name says it holds a secret is shown masked, whole.
_SECRET_NAME = re.compile(r"pass|pwd|secret|token|credential|private|api_?key|auth", re.I)
# A secret inside another value: the password of a URL (postgresql://user:PW@host/db,
# redis://:PW@host) or a keyword=value one (libpq "host=h password=PW", "?token=PW").
_URL_PASSWORD = re.compile(r"(?i)([a-z][a-z0-9+.-]*://[^/@:\s]*:)([^/\s]+)(@)")
_KEYWORD_SECRET = re.compile(
    r"(?i)((?:password|passwd|pwd|secret|token)\s*=\s*)('[^']*'|[^\s&;]+)"
)


def mask_secrets(name: str, value: str) -> str:
    """``value`` of the option ``name`` with any secret in it replaced by ``***``."""
    if _SECRET_NAME.search(name):
        return MASKED
    value = _URL_PASSWORD.sub(lambda m: m[1] + MASKED + m[3], value)
    return _KEYWORD_SECRET.sub(lambda m: m[1] + MASKED, value)


def replay_command(
    label: str,
    case_file: str,
    *,
    labels: Sequence[str],
    declared: Collection[str],
    options: Sequence[str] = (),
    ini_has_options: bool = False,
    testee: str | None = None,
    timeout: str | None = None,
) -> tuple[str, list[str]]:
    """The command that replays ``case_file`` against the same storage, and the options
    whose value it shows masked.

    ``options`` are the ``--rdq-option`` values of the command line, in their order (the
    last setting of a key wins): those that reach plugin ``label`` are repeated, those
    meant for another plugin of the run are left out (the replay selects ``label`` alone,
    which would refuse them). The ini file and the environment are read again by the
    replay, run from the same directory, so their values are not repeated.
    """
    args = [f"--rdq-plugin={shlex.quote(label)}"]
    masked: list[str] = []
    kept = 0
    for setting in options:
        key, _, value = setting.partition("=")
        target, name = split_option_key(key, labels)  # as resolve_options reads it
        if target not in (label, None) or (target is None and name not in declared):
            continue
        kept += 1
        shown = mask_secrets(name, value)
        if shown != value and key not in masked:
            masked.append(key)
        args.append(f"--rdq-option={shlex.quote(f'{key}={shown}')}")
    if options and not kept and ini_has_options:
        # The command line's options replaced the ini file's; none is left to do so.
        args.append("-o rdq_options=")
    if testee is not None and label == STDIO:
        shown = mask_secrets("command", testee)
        if shown != testee:
            masked.append("--rdq-testee")
        args.append(f"--rdq-testee={shlex.quote(shown)}")
    if timeout is not None:
        args.append(f"--rdq-timeout={shlex.quote(timeout)}")
    args.append(f"--rdq-replay {shlex.quote(case_file)}")
    return "pytest " + " ".join(args), masked
