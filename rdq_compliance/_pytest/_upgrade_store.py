"""The plugin calls of an upgrade save and check: store the corpus, read it back
through the release that saved it, drop it; every failure an :class:`UpgradeError`."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..envelope._diff import diff
from ..envelope._difference import format_diff
from ..envelope._model import Envelope
from ..storage._protocol import StorageError
from ..testing._copy import private_copy
from ..testing._failures import OperationHung, PluginFault, describe_storage_error
from ..testing._runtime import PluginRuntime
from ..testing._upgrade import DROPPED
from ._upgrade_corpus import MANIFEST, Step, UpgradeError

__all__ = ["call", "drop_previous", "storage", "store", "verify"]


def storage(rt: PluginRuntime) -> Any:
    if rt.storage is None:
        raise UpgradeError(rt.dead or rt.broken or "the storage is gone")
    return rt.storage


def call(rt: PluginRuntime, op: str, fn: Callable[..., Any], *args: Any) -> Any:
    try:
        return rt.call(op, fn, *args)
    except OperationHung as exc:
        raise UpgradeError(str(exc)) from None
    except PluginFault as fault:
        err = fault.exc
        what = describe_storage_error(err) if isinstance(err, StorageError) else (
            f"{type(err).__name__}: {err}")
        raise UpgradeError(f"{op} raised {what}") from None


def drop_previous(rt: PluginRuntime, directory: Path) -> None:
    """Saving again into DIR: drop the corpus of the earlier save first."""
    try:
        raw = json.loads((directory / MANIFEST).read_text(encoding="utf-8"))
        names = [str(n) for n in raw["namespaces"].values()]
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return
    for name in names:
        call(rt, f"storage.drop({name!r})", storage(rt).drop, name)


@contextmanager
def adapters(rt: PluginRuntime) -> Iterator[Callable[[str], Any]]:
    """An adapter per namespace, opened on first use and closed at the end."""
    opened: dict[str, Any] = {}

    def get(name: str) -> Any:
        if name not in opened:
            opened[name] = call(rt, f"storage.open({name!r})", storage(rt).open, name)
        return opened[name]

    try:
        yield get
    finally:
        for name, adapter in opened.items():
            call(rt, f"adapter.close() of namespace {name!r}", adapter.close)


def store(rt: PluginRuntime, namespaces: Mapping[str, str], steps: Sequence[Step]) -> None:
    with adapters(rt) as adapter:
        for kind, role, env in steps:
            name = namespaces[role]
            if kind == "drop":
                call(rt, f"storage.drop({name!r})", storage(rt).drop, name)
                continue
            assert env is not None
            op = f"write(envelope id={env.id!r}) in namespace {name!r}"
            call(rt, op, adapter(name).write, private_copy(env))


def verify(rt: PluginRuntime, namespaces: Mapping[str, str],
            expected: Mapping[str, Mapping[str, Envelope]], dropped: Sequence[str]) -> None:
    """The release that saves must read its own corpus back: otherwise the check would
    blame the migration for a defect of the previous release."""
    with adapters(rt) as adapter:
        for role, by_id in expected.items():
            name = namespaces[role]
            for id, env in by_id.items():
                op = f"read({id!r}) in namespace {name!r}"
                got = call(rt, op, adapter(name).read, id)
                fix = ("; run the kit on this release without --rdq-upgrade-save and fix "
                       "that first")
                if not isinstance(got, Envelope):
                    raise UpgradeError(f"the release being saved does not read back its own "
                                       f"write: {op} returned {got!r:.200}{fix}")
                differences = diff(env, got)
                if differences:
                    first = format_diff(differences).splitlines()[0]
                    raise UpgradeError(f"the release being saved does not read back its own "
                                       f"write: {op} differs: {first}{fix}")
        name = namespaces[DROPPED]
        for id in dropped:
            if call(rt, f"read({id!r}) in namespace {name!r}", adapter(name).read, id):
                raise UpgradeError(f"the release being saved still reads {id!r} in namespace "
                                   f"{name!r} after dropping it (RDQ-ST-004); fix that first")
