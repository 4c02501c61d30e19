"""A testee (testee-protocol.md) that stores envelopes correctly, unless told otherwise.

    python tests/mutants/testee.py                     # correct, durable in $RDQ_STATE_DIR
    python tests/mutants/testee.py --variant NAME      # correct in a way the spec allows
    python tests/mutants/testee.py --defect NAME       # one real-world defect or fault
    python tests/mutants/testee.py --layout 1          # release 1.0.0 of an upgrade (C19)
    python tests/mutants/testee.py --layout 2 --migration NAME  # release 2.0.0, migrating

Standard library only, on purpose: it plays a plugin written by someone else, so it
shares no code with the kit. It stores the JSON object of each written envelope as
text and sends it back on read; every defect or variant is applied to the response
(or to one step of the protocol) and is listed in DEFECTS / VARIANTS below.

One-shot faults (crash, hang, garbage, ...) fire once per kit run: a marker file in
$RDQ_STATE_DIR remembers that they fired, so the bridge's restart of the testee
brings back a working process and the run ends in bounded time.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import random
import shutil
import sys
import threading
import time
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

Obj = dict[str, Any]

TOP_TIMESTAMPS = ("next_attempt_at", "lease_expires_at", "created_at")
ATTEMPT_TIMESTAMPS = ("started_at", "finished_at")
KNOWN_TOP = frozenset((
    "envelope_version", "id", "queue", "handler_ref", "handler_version", "payload",
    "payload_content_type", "headers", "status", "attempt_count", "redrive_count",
    "next_attempt_at", "lease_expires_at", "created_at", "attempts",
))
KNOWN_ATTEMPT = frozenset(["attempt_no", "started_at", "finished_at", "outcome", "error"])
KNOWN_ERROR = frozenset(["type", "message", "detail", "stack"])
OPTIONAL = {  # C9: optional known fields per object
    "top": ("handler_version", "next_attempt_at", "lease_expires_at"),
    "attempt": ("finished_at", "error"),
    "error": ("detail", "stack"),
}
SUPPORTED_VERSIONS = (1,)
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

DEFECTS = {
    # wire-form defects (RDQ-RT-004 judges the JSON a testee sends back)
    "ts_offset": "timestamps written with +00:00 instead of Z (java.time OffsetDateTime)",
    "ts_micro": "timestamps with 6 fraction digits (Go time.RFC3339Nano, Python isoformat)",
    "ts_epoch_ms": "timestamps as epoch milliseconds (Jackson WRITE_DATES_AS_TIMESTAMPS)",
    "id_lower": "ids sent back in lower case (case-insensitive ULID libraries)",
    "b64_nopad": "payload base64 without '=' padding (Go base64.RawStdEncoding)",
    "b64_url": "payload in URL-safe base64 (Go base64.URLEncoding)",
    "dup_keys": "a response object holding the same key twice (hand-rolled JSON writer)",
    "numbers_as_strings": "every number as a string (Jackson WRITE_NUMBERS_AS_STRINGS)",
    "omit_zero": "known integer fields equal to 0 omitted (Go `json:\",omitempty\"`)",
    # semantic defects
    "handler_version_omitempty": 'handler_version "" omitted, read back as null (Go omitempty)',
    "js_int64": "integers beyond 2^53 lose precision (JavaScript JSON.parse/stringify)",
    "drop_unknown": "unknown top-level fields dropped (a typed struct without a residual)",
    "trim_space": "error messages and stacks trimmed (Go strings.TrimSpace)",
    "not_durable": "claims durable but keeps everything in process memory",
    "wrong_version_code": "undeclared envelope versions rejected with INVALID_ENVELOPE",
    "drop_prefix": "drop removes every namespace whose name starts with the one dropped",
    # faults
    "crash": "exits with status 3 in the middle of the 5th write",
    "hang": "stops answering at the 5th read",
    "hang_every_read": "never answers a read (a reader deadlocked on a lock)",
    "hang_after_warmup": "each process answers 6 requests, then never answers a read "
                         "(a leaking connection pool)",
    "outage": "answers UNAVAILABLE (C20) to requests 100 to 199 of its process (its "
              "database went away for a while); not a defect: the run is incomplete",
    "garbage": "prints a line that is not a protocol response at the 5th read",
    "wrong_seq": "answers the 5th read with the wrong seq",
    "extra_line": "answers the 5th write twice",
    "invalid_json": "answers the 5th read with a line that is not JSON",
    "bad_code": "reports a missing id as error code NOT_FOUND (not a C17 code)",
    # concurrency (C18): these claim concurrent and take requests pipelined
    "mixed_seq": "answers pipelined requests with the seq of the latest request received "
                 "(the request id kept in one variable shared by all handler threads)",
}
ONE_SHOT = {"crash": "write", "hang": "read", "garbage": "read", "wrong_seq": "read",
            "extra_line": "write", "invalid_json": "read"}
VARIANTS = {
    "good": "correct and durable",
    "shuffled_keys": "object keys in random order",
    "escapes": "every non-ASCII character and '/' escaped (\\u00e9, \\ud83d\\ude00, \\/)",
    "absent_optional": "optional known fields that are null are left out (C9: read as null)",
    "js_numbers": "integral doubles below 1e21 written as integers (JavaScript: 1.0 -> 1)",
    "memory": "keeps data in memory and does not claim durable",
    "extra_capability": "claims capabilities the kit does not know",
    "chatty_stderr": "writes ~8 KiB of log to stderr per request",
    "slow": "starts slowly and answers some requests after 200 ms",
    "concurrent": "claims concurrent: handles pipelined requests on threads and answers "
                  "them in whatever order they finish (random delays)",
}
CONCURRENT = {"concurrent", "mixed_seq"}


MIGRATIONS = {  # release 2.0.0's migration of a release-1.0.0 state (C19)
    "correct": "moves every file of every namespace into the new layout",
    "forget_residual": "keeps only the known top-level fields (a typed struct on the way)",
    "truncate_ms": "rewrites timestamps through whole seconds",
    "skip_rows": "copies whole pages of 10 files only; the last, partial page is lost",
    "one_batch": "moves the first 1,000 files only (one batch of a batched copy)",
    "shadow": "writes the migrated files under the plain id, a name release 2.0.0 reads "
              "before its own (hex) name: rewrites stay hidden behind them",
    "resurrect": "walks the state recursively and brings back the dropped namespaces that "
                 "release 1.0.0 kept in .trash",
}
RELEASES = {1: "1.0.0", 2: "2.0.0"}


def main() -> int:
    # js_dump recurses about three frames per level; RDQ-UF-007 nests values 400 deep
    # (JavaScript's JSON.stringify has no such limit).
    sys.setrecursionlimit(10_000)
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--defect", choices=sorted(DEFECTS))
    ap.add_argument("--variant", choices=sorted(VARIANTS), default="good")
    ap.add_argument("--layout", type=int, choices=sorted(RELEASES))
    ap.add_argument("--migration", choices=sorted(MIGRATIONS), default="correct")
    args = ap.parse_args()
    testee = Testee(args.defect, args.variant, layout=args.layout, migration=args.migration)
    if args.variant == "slow":
        time.sleep(1.0)
    if testee.concurrent:
        return serve_concurrently(testee)
    for raw in sys.stdin.buffer:
        if not raw.strip():
            continue
        request = json.loads(raw)
        if testee.log:
            sys.stderr.write(f"request seq={request.get('seq')} op={request.get('op')}\n" * 200)
            sys.stderr.flush()
        out = testee.handle(request)
        if out is not None:
            sys.stdout.write(out + "\n")
            sys.stdout.flush()
        if request.get("op") == "bye":
            return 0
    return 0


def serve_concurrently(testee: Testee) -> int:
    """Each request (after hello) on a thread of its own, answered when it is done."""
    out_lock = threading.Lock()
    threads: list[threading.Thread] = []

    def answer(out: str | None) -> None:
        if out is not None:
            with out_lock:
                sys.stdout.write(out + "\n")
                sys.stdout.flush()

    def work(request: Obj, rng: random.Random) -> None:
        time.sleep(rng.random() * 0.002)  # finish in another order than received
        if testee.defect == "mixed_seq":  # the shared "current request" variable
            request = {**request, "seq": testee.current_seq}
        answer(testee.handle(request))

    for n, raw in enumerate(sys.stdin.buffer):
        if not raw.strip():
            continue
        request = json.loads(raw)
        if request.get("op") in ("hello", "bye"):
            for t in threads:
                t.join()
            threads.clear()
            answer(testee.handle(request))
            if request.get("op") == "bye":
                return 0
            continue
        testee.current_seq = request.get("seq")
        t = threading.Thread(target=work, args=(request, random.Random(n)), daemon=True)
        t.start()
        threads.append(t)
        threads = [t for t in threads if t.is_alive()]
    return 0


class Testee:
    def __init__(self, defect: str | None, variant: str, *, layout: int | None = None,
                 migration: str = "correct") -> None:
        self.layout = layout
        self.migration = migration
        self.defect = defect
        self.variant = variant
        self.concurrent = (defect or variant) in CONCURRENT
        self.current_seq: Any = None
        self.log = variant == "chatty_stderr"
        self.state = Path(os.environ.get("RDQ_STATE_DIR") or ".") / f"zoo-{defect or variant}"
        self.memory: dict[str, dict[str, str]] | None = (
            {} if defect == "not_durable" or variant == "memory" else None
        )
        self.counts = {"read": 0, "write": 0}
        self.rng = random.Random(7)
        self.requests = 0
        if layout == 2:
            self.migrate()

    # -- protocol ------------------------------------------------------------------------
    def handle(self, req: Obj) -> str | None:
        op, seq = req.get("op"), int(req.get("seq", -1))
        self.requests += 1
        if self.variant == "slow" and self.requests % 40 == 0:
            time.sleep(0.2)
        if op == "hello":
            caps = [] if self.variant == "memory" else ["durable"]
            if self.concurrent:
                caps.append("concurrent")
            if self.variant == "extra_capability":
                caps += ["transactions", "ttl"]
            return self.dump({
                "seq": seq, "ok": True, "name": f"zoo-testee-{self.defect or self.variant}",
                "version": RELEASES[self.layout or 1],
                "envelope_versions": list(SUPPORTED_VERSIONS),
                "capabilities": caps,
            })
        if self.defect == "outage" and op in ("write", "read", "drop") and (
                100 <= self.requests < 200):
            return self.error(seq, "UNAVAILABLE", "connection refused: the database is down")
        if op == "read" and (self.defect == "hang_every_read" or (
                self.defect == "hang_after_warmup" and self.requests > 6)):
            return self.fire("hang", seq)
        if op in self.counts:
            self.counts[op] += 1
            fault = self.one_shot(op)
            if fault is not None:
                return self.fire(fault, seq)
        if op == "write":
            return self.write(seq, req["namespace"], req["envelope"])
        if op == "read":
            return self.read(seq, req["namespace"], req["id"])
        if op == "drop":
            self.drop(req["namespace"])
            return self.dump({"seq": seq, "ok": True})
        if op == "bye":
            return self.dump({"seq": seq, "ok": True})
        return self.error(seq, "NOT_SUPPORTED", f"unknown op {op!r}")

    def one_shot(self, op: str) -> str | None:
        if self.defect not in ONE_SHOT or ONE_SHOT[self.defect] != op or self.counts[op] != 5:
            return None
        marker = self.state.parent / f"zoo-fired-{self.defect}"
        if marker.exists():
            return None
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.write_text("fired\n")
        return self.defect

    def fire(self, fault: str, seq: int) -> str | None:
        sys.stderr.write(f"zoo testee: injecting fault {fault!r} at seq {seq}\n")
        sys.stderr.flush()
        if fault == "crash":
            os._exit(3)
        if fault == "hang":
            while True:
                time.sleep(3600)
        if fault == "garbage":
            return "hello world"
        if fault == "wrong_seq":
            return self.dump({"seq": seq + 1, "ok": True, "envelope": None})
        if fault == "extra_line":
            ok = self.dump({"seq": seq, "ok": True})
            return ok + "\n" + ok
        if fault == "invalid_json":
            return f'{{"seq": {seq}, "ok": tru'
        raise AssertionError(fault)

    def error(self, seq: int, code: str, message: str) -> str:
        return self.dump({"seq": seq, "ok": False, "error": {"code": code, "message": message}})

    # -- storage -------------------------------------------------------------------------
    def path(self, namespace: str, id: str | None = None) -> Path:
        p = (self.state / "v2" if self.layout == 2 else self.state) / namespace
        return p if id is None else p / (id.encode("utf-8").hex() + ".json")

    def write(self, seq: int, namespace: str, env: Obj) -> str:
        version = env.get("envelope_version")
        if self.defect == "wrong_version_code" and version not in SUPPORTED_VERSIONS:
            return self.error(seq, "INVALID_ENVELOPE", f"envelope_version {version} unknown")
        text = json.dumps(env, ensure_ascii=False)
        if self.memory is not None:
            self.memory.setdefault(namespace, {})[env["id"]] = text
        else:
            path = self.path(namespace, env["id"])
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(f".tmp{threading.get_ident()}")
            tmp.write_text(text, encoding="utf-8")
            tmp.replace(path)
        return self.dump({"seq": seq, "ok": True})

    def read(self, seq: int, namespace: str, id: str) -> str:
        if self.memory is not None:
            text = self.memory.get(namespace, {}).get(id)
        else:
            path = self.path(namespace, id)
            legacy = self.path(namespace) / f"{id}.json"
            if self.layout == 2 and legacy.is_file():  # compatibility lookup comes first
                path = legacy
            text = path.read_text(encoding="utf-8") if path.exists() else None
        if text is None:
            if self.defect == "bad_code":
                return self.error(seq, "NOT_FOUND", f"no envelope {id}")
            return self.dump({"seq": seq, "ok": True, "envelope": None})
        env = self.transform(json.loads(text))
        if self.defect == "dup_keys":  # the envelope object carries "status" twice
            body = self.dump(env)
            body = '{"status":"DEAD",' + body[1:]
            return f'{{"seq":{seq},"ok":true,"envelope":{body}}}'
        return self.dump({"seq": seq, "ok": True, "envelope": env})

    def drop(self, namespace: str) -> None:
        if self.defect == "drop_prefix":  # rm -rf "$STATE/$ns"*
            for other in [d for d in self.state.glob(namespace + "*") if d.is_dir()]:
                self._drop_dir(other)
            return
        if self.memory is not None:
            self.memory.pop(namespace, None)
            return
        directory = self.path(namespace)
        if directory.exists() and self.layout == 1:  # kept for recovery, out of sight
            trash = self.state / ".trash" / str(len(list(self.state.glob(".trash/*"))))
            trash.mkdir(parents=True)
            directory.rename(trash / namespace)
        self._drop_dir(directory)

    def _drop_dir(self, directory: Path) -> None:
        if directory.exists():
            for f in directory.iterdir():
                f.unlink()
            directory.rmdir()

    # -- upgrades (C19) ---------------------------------------------------------------------
    def migrate(self) -> None:
        """Release 2.0.0 opening a release-1.0.0 state: namespaces move under v2/."""
        marker = self.state / "LAYOUT"
        if marker.exists() and marker.read_text().strip() == "2":
            return
        if self.migration == "resurrect":
            files = [f for f in self.state.rglob("*.json") if "v2" not in f.parts]
        else:
            files = [f for d in self.state.iterdir() if d.is_dir() and d.name not in ("v2",
                     ".trash") for f in d.glob("*.json")] if self.state.is_dir() else []
        files.sort()
        if self.migration == "skip_rows":  # per namespace: the remainder of the pages goes
            by_ns: dict[Path, list[Path]] = {}
            for f in files:
                by_ns.setdefault(f.parent, []).append(f)
            files = [f for group in by_ns.values() for f in group[: len(group) // 10 * 10]]
        if self.migration == "one_batch":
            files = files[:1000]
        for f in files:
            env = json.loads(f.read_text(encoding="utf-8"))
            if self.migration == "forget_residual":
                env = {k: v for k, v in env.items() if k in KNOWN_TOP}
            elif self.migration == "truncate_ms":
                map_timestamps(env, lambda t: t[:19] + ".000Z")
            name = f.name
            if self.migration == "shadow":
                name = bytes.fromhex(f.stem).decode("utf-8") + ".json"
            target = self.state / "v2" / f.parent.name / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(json.dumps(env, ensure_ascii=False), encoding="utf-8")
        if self.state.is_dir():
            for d in self.state.iterdir():
                if d.is_dir() and d.name != "v2":
                    shutil.rmtree(d)
        self.state.mkdir(parents=True, exist_ok=True)
        marker.write_text("2\n")

    # -- defects and variants on the envelope read back -----------------------------------
    def transform(self, env: Obj) -> Obj:
        d = self.defect
        if d in ("ts_offset", "ts_micro", "ts_epoch_ms"):
            map_timestamps(env, {"ts_offset": lambda t: t[:-1] + "+00:00",
                                 "ts_micro": lambda t: t[:-1] + "000Z",
                                 "ts_epoch_ms": epoch_ms}[d])
        elif d == "id_lower":
            env["id"] = env["id"].lower()
        elif d == "b64_nopad":
            env["payload"] = env["payload"].rstrip("=")
        elif d == "b64_url":
            env["payload"] = base64.urlsafe_b64encode(base64.b64decode(env["payload"])).decode()
        elif d == "numbers_as_strings":
            env = numbers_to_strings(env)
        elif d == "omit_zero":
            for obj, known in objects(env):
                for key in [k for k in obj if k in known and type(obj[k]) is int and obj[k] == 0]:
                    del obj[key]
        elif d == "handler_version_omitempty":
            if env.get("handler_version") == "":
                del env["handler_version"]
        elif d == "drop_unknown":
            env = {k: v for k, v in env.items() if k in KNOWN_TOP}
        elif d == "trim_space":
            for obj, known in objects(env):
                if known is KNOWN_ERROR:
                    for key in ("message", "stack"):
                        if isinstance(obj.get(key), str):
                            obj[key] = obj[key].strip()
        if self.variant == "absent_optional":
            for obj, known in objects(env):
                kind = ("top" if known is KNOWN_TOP
                        else "attempt" if known is KNOWN_ATTEMPT else "error")
                for key in OPTIONAL[kind]:
                    if key in obj and obj[key] is None:
                        del obj[key]
        if self.variant == "shuffled_keys":
            env = shuffle(env, self.rng)
        return env

    def dump(self, obj: Any) -> str:
        if self.variant == "escapes":
            return json.dumps(obj, ensure_ascii=True).replace("/", "\\/")
        if self.variant == "js_numbers" or self.defect == "js_int64":
            return js_dump(obj, int64_loss=self.defect == "js_int64")
        return json.dumps(obj, ensure_ascii=False)


def objects(env: Obj) -> list[tuple[Obj, frozenset[str]]]:
    out: list[tuple[Obj, frozenset[str]]] = [(env, KNOWN_TOP)]
    for attempt in env.get("attempts") or []:
        out.append((attempt, KNOWN_ATTEMPT))
        if isinstance(attempt.get("error"), dict):
            out.append((attempt["error"], KNOWN_ERROR))
    return out


def map_timestamps(env: Obj, fn: Any) -> None:
    for key in TOP_TIMESTAMPS:
        if isinstance(env.get(key), str):
            env[key] = fn(env[key])
    for attempt in env.get("attempts") or []:
        for key in ATTEMPT_TIMESTAMPS:
            if isinstance(attempt.get(key), str):
                attempt[key] = fn(attempt[key])


def epoch_ms(text: str) -> int:
    dt = datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)
    return (dt - EPOCH) // timedelta(milliseconds=1)


def numbers_to_strings(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: numbers_to_strings(v) for k, v in value.items()}
    if isinstance(value, list):
        return [numbers_to_strings(v) for v in value]
    if isinstance(value, int | float) and not isinstance(value, bool):
        return repr(value)
    return value


def shuffle(value: Any, rng: random.Random) -> Any:
    if isinstance(value, dict):
        items = [(k, shuffle(v, rng)) for k, v in value.items()]
        rng.shuffle(items)
        return dict(items)
    if isinstance(value, list):
        return [shuffle(v, rng) for v in value]
    return value


def js_dump(value: Any, *, int64_loss: bool) -> str:
    """JSON text as JavaScript's JSON.stringify writes numbers.

    A JS number is a double: integral values below 1e21 print as integers (1.0 -> "1",
    1e20 -> "100000000000000000000"), and an integer beyond 2^53 has already been
    rounded to the nearest double when JSON.parse read it (``int64_loss``).
    """
    if isinstance(value, dict):
        return "{" + ",".join(
            json.dumps(k, ensure_ascii=False) + ":" + js_dump(v, int64_loss=int64_loss)
            for k, v in value.items()
        ) + "}"
    if isinstance(value, list):
        return "[" + ",".join(js_dump(v, int64_loss=int64_loss) for v in value) + "]"
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, int):
        if int64_loss and abs(value) > 2**53:
            return format(Decimal(repr(float(value))), "f")
        return str(value)
    if isinstance(value, float):
        if value.is_integer() and abs(value) < 1e21:
            return str(int(value))
        return repr(value)
    raise TypeError(type(value))


if __name__ == "__main__":
    sys.exit(main())
