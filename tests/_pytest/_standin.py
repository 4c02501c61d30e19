"""A configurable stand-in storage plugin, written into each pytester directory.

``STANDIN`` is the source of a module ``standin`` exposing ``plugin`` (use
``--rdq-plugin=standin:plugin``). The option ``fault`` makes it misbehave in one
precise way; ``log`` names a file that receives one line per call, so tests can
see what the kit did (examples drawn, namespaces used).
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

STANDIN = textwrap.dedent(
    '''
    import dataclasses, hashlib, json, os, shutil, threading, time
    from rdq_compliance import (
        ErrorCode, OptionSpec, StorageError, StorageInfo, StorageUnavailable,
        encode, from_json, hookimpl, parse_json,
    )

    FAULTS = (
        "none", "raise-on-read", "read-wrong-type", "write-returns", "mutate", "hang-on-read",
        "drop-ms", "refuse-internal", "bad-code", "unavailable", "open-raises", "bad-info",
        "drop-unknown-fields", "no-isolation", "forgetful",
        "refuse-over-64k",  # a 64 KiB TEXT column: larger valid envelopes refused (C17)
        "raise-always",  # every write raises the same exception (a dead connection)
        # The first read of the process hangs; then, as the kit recovers: nothing
        # else, dropping a namespace this storage did not open raises or hangs, or
        # opening a storage raises.
        "hang-once", "hang-once-drop-raises", "hang-once-drop-hangs", "hang-once-reopen-fails",
        # dropping a namespace nothing was written to raises (DROP TABLE without IF EXISTS
        # on a table made by the first write): a SHOULD of C14 (RDQ-ST-007) failed only
        "drop-empty-raises",
    )
    class _Table:
        """One file per envelope: a new process reads what this one wrote (C15)."""

        def __init__(self, root):
            self.root = root

        def _file(self, id):
            return os.path.join(self.root, hashlib.sha256(id.encode()).hexdigest())

        def __setitem__(self, id, text):
            os.makedirs(self.root, exist_ok=True)
            with open(self._file(id), "w", encoding="utf-8") as f:
                f.write(text)

        def get(self, id):
            try:
                with open(self._file(id), encoding="utf-8") as f:
                    return f.read()
            except FileNotFoundError:
                return None

    class _Disk:
        """The durable store: a directory per namespace, under the working directory."""

        # beside this module (written into the test's directory), whatever the cwd
        root = os.path.join(os.path.dirname(os.path.abspath(__file__)), ".standin-disk")

        def _dir(self, ns):
            return os.path.join(self.root, hashlib.sha256(ns.encode()).hexdigest())

        def setdefault(self, ns, default):
            return _Table(self._dir(ns))

        def pop(self, ns, default=None):
            shutil.rmtree(self._dir(ns), ignore_errors=True)
    _HUNG = threading.Event()  # a hang-once read has hung in this process

    def _log(options, *parts):
        if options.get("log"):
            with open(options["log"], "a", encoding="utf-8") as f:
                f.write(" ".join(str(p) for p in parts) + "\\n")

    class Adapter:
        def __init__(self, storage, ns):
            self.storage, self.ns = storage, ns
            self.fault = storage.options["fault"]

        def _space(self):
            key = "shared" if self.fault == "no-isolation" else self.ns
            return self.storage.data.setdefault(key, {})

        def write(self, envelope):
            _log(self.storage.options, "write", self.ns, envelope.id)
            if self.fault == "raise-always":
                raise ConnectionError("connection reset by peer")
            if self.fault == "refuse-internal":
                raise StorageError(ErrorCode.INTERNAL, "disk full")
            if self.fault == "bad-code":
                raise StorageError("DISK_FULL", "disk full")
            if envelope.envelope_version != 1:
                raise StorageError(ErrorCode.UNSUPPORTED_ENVELOPE_VERSION, "v1 only")
            if self.fault == "refuse-over-64k":
                size = len(encode(envelope).encode("utf-8"))
                if size > 65_535:
                    raise StorageError(ErrorCode.PAYLOAD_TOO_LARGE, f"{size} bytes > TEXT (65535)")
            if self.fault == "mutate":
                envelope.headers["x-touched-by-plugin"] = "yes"
            if self.fault != "forgetful":
                self._space()[envelope.id] = encode(envelope)
            self.storage.written.add(self.ns)
            if self.fault == "write-returns":
                return True

        def read(self, id):
            _log(self.storage.options, "read", self.ns, id)
            if self.fault == "raise-on-read":
                return _explode(id)
            if self.fault == "hang-on-read":
                time.sleep(60)
            if self.fault.startswith("hang-once") and not _HUNG.is_set():
                _HUNG.set()
                time.sleep(60)
            text = self._space().get(id)
            if text is None:
                return None
            if self.fault == "read-wrong-type":
                return text
            env = from_json(parse_json(text))
            if self.fault == "drop-ms":
                env = dataclasses.replace(
                    env, created_at=env.created_at.replace(microsecond=0))
            if self.fault == "drop-unknown-fields":
                env = dataclasses.replace(env, extra={})
            return env

        def close(self):
            pass

    def _explode(id):
        raise KeyError(f"no row for {id}")

    class Storage:
        def __init__(self, options):
            self.options = options
            self.opened = set()
            self.written = set()
            durable = options.get("durable") == "yes"
            self.data = _Disk() if durable else {}
            caps = {"durable"} if durable else set()
            self.info = StorageInfo("standin", "0.1", frozenset({1}), frozenset(caps))
            if options["fault"] == "bad-info":
                self.info = {"name": "standin"}

        def open(self, namespace):
            _log(self.options, "open", namespace, os.getpid())
            self.opened.add(namespace)
            return Adapter(self, namespace)

        def drop(self, namespace):
            _log(self.options, "drop", namespace, os.getpid())
            if namespace not in self.opened:
                if self.options["fault"] == "hang-once-drop-raises":
                    raise RuntimeError(f"no namespace {namespace} here")
                if self.options["fault"] == "hang-once-drop-hangs":
                    time.sleep(60)
            if self.options["fault"] == "drop-empty-raises" and namespace not in self.written:
                raise RuntimeError(f"Unknown table 'rdq_{namespace}'")
            self.written.discard(namespace)
            self.data.pop(namespace, None)

        def close(self):
            pass

    class Plugin:
        @hookimpl
        def rdq_storage_options(self):
            return [
                OptionSpec("fault", default="none", choices=FAULTS),
                OptionSpec("log", default=""),
                OptionSpec("durable", default="no", choices=("yes", "no")),
                OptionSpec("password", default=""),  # unused: a secret to keep out of sight
            ]

        @hookimpl
        def rdq_storage_open(self, options):
            if options["fault"] == "unavailable":
                raise StorageUnavailable("cannot reach standin at 127.0.0.1:1", setting="dsn")
            if options["fault"] == "open-raises" or (
                options["fault"] == "hang-once-reopen-fails" and _HUNG.is_set()
            ):
                raise RuntimeError("standin cannot start")
            return Storage(options)

    plugin = Plugin()
    '''
)


def install_fake_dist(root: Path, name: str, entry_points: dict[str, str]) -> None:
    """Write ``<name>-0.1.dist-info`` into ``root`` registering ``rdq.storage`` entry
    points, as an installed distribution would (found through ``sys.path``)."""
    info = root / f"{name}-0.1.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n", encoding="utf-8"
    )
    lines = ["[rdq.storage]", *(f"{k} = {v}" for k, v in entry_points.items()), ""]
    (info / "entry_points.txt").write_text("\n".join(lines), encoding="utf-8")


def run(
    pytester: pytest.Pytester, *args: str, subprocess: bool = False, profile: str = "quick"
) -> pytest.RunResult:
    """Run pytest in the pytester directory with the quick profile, no cache."""
    base = ["-p", "no:cacheprovider", f"--rdq-profile={profile}"]
    runner = pytester.runpytest_subprocess if subprocess else pytester.runpytest
    return runner(*base, *args)
