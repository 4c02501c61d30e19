"""The zoo's durable "disk": namespace -> key -> text, kept in files under the cwd.

The kit checks durability (C15) from a new Python process too, so a durable zoo
storage must keep its data in files, not in the memory of the process that wrote it.

Layout, under ``<cwd>/.rdq/zoo-disk/<entry id>/``::

    <sha256 of the namespace>/name                   the namespace name (JSON string)
    <sha256 of the namespace>/<sha256 of key>.json   [key, text] (JSON)

Names and keys are arbitrary strings (any length, any character, lone surrogates
included), hence the digests as file names and the real strings inside the files.
Every file is written to a temporary file then ``os.replace``d, and a dropped
namespace is renamed away before it is deleted, so a reader in another process sees
a file or namespace whole or not at all. Each object keeps an in-memory mirror of
its files (loaded when it is created, updated on every write) so reads cost no I/O.
Concurrent processes writing the same disk are not supported: each would keep its
own mirror.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tempfile
import threading
import uuid
from collections.abc import Iterator, Mapping, MutableMapping
from pathlib import Path
from typing import Any, TypeVar, overload

__all__ = ["FileDisk", "FileTable"]

_DIGEST = re.compile(r"[0-9a-f]{64}")
_NAME_FILE = "name"
_T = TypeVar("_T")
_MISSING = object()


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _dump(obj: object) -> bytes:
    # ensure_ascii=False keeps 1 MiB texts of non-ASCII at their size; surrogatepass
    # lets lone surrogates through (json.loads gives them back as they were).
    return json.dumps(obj, ensure_ascii=False).encode("utf-8", "surrogatepass")


def _load(path: Path) -> Any:
    return json.loads(path.read_bytes().decode("utf-8", "surrogatepass"))


def _write(path: Path, data: bytes) -> None:
    """Replace ``path`` whole (no fsync: C15 means a new process, not a power cut)."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class FileTable(MutableMapping[str, str]):
    """One namespace: key -> text, one file per key, written through at once.

    Once detached (its namespace dropped or replaced) it is a plain in-memory
    mapping, as a dict removed from a dict would be: later writes reach no file.
    """

    def __init__(self, directory: Path, lock: threading.RLock) -> None:
        self._dir: Path | None = directory
        self._lock = lock  # the disk's: a write never interleaves with a drop
        self._mirror: dict[str, str] = {}
        for path in sorted(directory.glob("*.json")):
            if _DIGEST.fullmatch(path.stem):  # not a writer's leftover temporary file
                key, text = _load(path)
                self._mirror[key] = text

    def detach(self) -> None:
        with self._lock:
            self._dir = None

    def __getitem__(self, key: str) -> str:
        return self._mirror[key]

    def __setitem__(self, key: str, text: str) -> None:
        with self._lock:
            if self._dir is not None:
                _write(self._dir / f"{_digest(key)}.json", _dump([key, text]))
            self._mirror[key] = text

    def __delitem__(self, key: str) -> None:
        with self._lock:
            del self._mirror[key]  # KeyError first, as a dict
            if self._dir is not None:
                (self._dir / f"{_digest(key)}.json").unlink(missing_ok=True)

    @overload
    def pop(self, key: str, /) -> str: ...
    @overload
    def pop(self, key: str, /, default: str | _T) -> str | _T: ...
    def pop(self, key: str, /, default: object = _MISSING) -> object:
        with self._lock:  # atomic as dict.pop (MutableMapping.pop reads, then deletes)
            if default is _MISSING:
                return super().pop(key)
            return super().pop(key, default)

    def __iter__(self) -> Iterator[str]:
        return iter(self._mirror)  # insertion order, as a dict (capped_store_256 needs it)

    def __len__(self) -> int:
        return len(self._mirror)

    def __contains__(self, key: object) -> bool:
        return key in self._mirror

    def __repr__(self) -> str:
        return f"FileTable({self._mirror!r})"


class FileDisk(MutableMapping[str, MutableMapping[str, str]]):
    """Namespace -> :class:`FileTable` of one zoo entry, under
    ``<cwd>/.rdq/zoo-disk/<entry_id>`` (the cwd when it is created).

    ``disk[ns]`` is the same table object every time (mutants compare with ``is``).
    Assigning a mapping (``disk[ns] = {...}``, ``update``, ``setdefault``) stores a
    new table holding a copy of it, replacing the namespace's old one.
    """

    def __init__(self, entry_id: str) -> None:
        self.root = Path.cwd() / ".rdq" / "zoo-disk" / entry_id
        self._lock = threading.RLock()
        self._tables: dict[str, FileTable] = {}
        if self.root.is_dir():
            for directory in sorted(self.root.iterdir()):
                name_file = directory / _NAME_FILE
                # No name file: a namespace still being created, or not one (a drop).
                if _DIGEST.fullmatch(directory.name) and name_file.is_file():
                    name = _load(name_file)
                    assert isinstance(name, str), name_file
                    self._tables[name] = FileTable(directory, self._lock)

    def __getitem__(self, namespace: str) -> FileTable:
        return self._tables[namespace]

    def __setitem__(self, namespace: str, value: Mapping[str, str]) -> None:
        with self._lock:
            if value is self._tables.get(namespace):
                return
            contents = dict(value)  # a copy: later changes to value reach no file
            if namespace in self._tables:
                del self[namespace]
            directory = self.root / _digest(namespace)
            directory.mkdir(parents=True, exist_ok=True)
            _write(directory / _NAME_FILE, _dump(namespace))  # before any key: see __init__
            table = self._tables[namespace] = FileTable(directory, self._lock)
            table.update(contents)

    def __delitem__(self, namespace: str) -> None:
        with self._lock:
            self._tables.pop(namespace).detach()  # KeyError first, as a dict
            # Renamed away before it is deleted: another process sees it whole or gone.
            trash = self.root / f".dropped-{uuid.uuid4().hex}"
            (self.root / _digest(namespace)).rename(trash)
            shutil.rmtree(trash, ignore_errors=True)

    @overload
    def pop(self, namespace: str, /) -> FileTable: ...
    @overload
    def pop(self, namespace: str, /, default: _T) -> FileTable | _T: ...
    def pop(self, namespace: str, /, default: object = _MISSING) -> object:
        with self._lock:  # atomic as dict.pop: concurrent drops of one namespace
            if default is _MISSING:
                return super().pop(namespace)
            return super().pop(namespace, default)

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._tables))  # a snapshot: other threads may drop meanwhile

    def __len__(self) -> int:
        return len(self._tables)

    def __contains__(self, namespace: object) -> bool:
        return namespace in self._tables

    def setdefault(self, namespace: str, default: Mapping[str, str] | None = None) -> FileTable:
        # MutableMapping.setdefault would return ``default`` itself, which no file backs.
        with self._lock:
            if namespace not in self._tables:
                self[namespace] = default or {}
            return self._tables[namespace]

    def __repr__(self) -> str:
        return f"FileDisk({str(self.root)!r}, {self._tables!r})"
