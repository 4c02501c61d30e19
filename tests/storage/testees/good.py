"""A fake testee (testee-protocol.md) with switchable faults, for the stdio bridge's tests.

Without flags it is a correct, in-memory testee. ``--durable`` keeps envelopes as
files under $RDQ_STATE_DIR. Fault flags take the 1-based number N of the request
(hello counts as request 1, and counting restarts with every process) at which the
fault happens. Uses only the standard library: it stands for a testee in any language.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import time
import urllib.parse


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--durable", action="store_true")
    ap.add_argument("--crash-on", type=int, default=0, help="exit with status 3 at request N")
    ap.add_argument("--hang-on", type=int, default=0, help="stop answering at request N")
    ap.add_argument("--garbage-on", type=int, default=0, help="print 'hello world' at request N")
    ap.add_argument("--invalid-json-on", type=int, default=0)
    ap.add_argument("--wrong-seq-on", type=int, default=0, help="answer seq-1 at request N")
    ap.add_argument("--extra-line-on", type=int, default=0, help="answer request N twice")
    ap.add_argument("--dup-seq-on", type=int, default=0, help="duplicate 'seq' key at request N")
    ap.add_argument("--close-stdout-on", type=int, default=0)
    ap.add_argument("--deaf-after", type=int, default=0,
                    help="after answering request N, stop reading stdin")
    ap.add_argument("--exit-after", type=int, default=0,
                    help="exit with status 4 after answering request N")
    ap.add_argument("--ignore-eof", action="store_true", help="keep running after stdin ends")
    ap.add_argument("--banner", action="store_true", help="print a line before reading hello")
    ap.add_argument("--error", default="", help="OP:CODE: answer every OP with this error")
    ap.add_argument("--mangle", default="", help="corrupt envelopes returned by read: "
                    "timestamp | id | base64 | dupkey | surrogate | types")
    ap.add_argument("--variant", default="", help="allowed differences in read answers: "
                    "escaped (ASCII escapes, shuffled keys, absent optional fields)")
    ap.add_argument("--hello", default="{}", help="JSON object merged into the hello answer")
    ap.add_argument("--bye-status", type=int, default=0)
    ap.add_argument("--linger-after-bye", action="store_true")
    ap.add_argument("--chatty", type=int, default=0, help="bytes of stderr per request")
    ap.add_argument("--slow-start", type=float, default=0.0)
    ap.add_argument("--delay", type=float, default=0.0, help="seconds before each answer")
    args = ap.parse_args()

    state_dir = os.environ.get("RDQ_STATE_DIR", "")
    print(f"fake testee pid={os.getpid()} state_dir={state_dir!r} args={sys.argv[1:]}",
          file=sys.stderr, flush=True)
    if args.slow_start:
        time.sleep(args.slow_start)
    out = sys.stdout.buffer
    if args.banner:
        out.write(b"starting up\n")
        out.flush()
    memory: dict[str, dict[str, str]] = {}
    error_op, _, error_code = args.error.partition(":")

    def path(ns: str, id: str | None = None) -> str:
        base = os.path.join(state_dir, "fake", ns)
        return base if id is None else os.path.join(base, urllib.parse.quote(id, safe="") + ".json")

    def store(ns: str, id: str, text: str) -> None:
        if args.durable:
            os.makedirs(path(ns), exist_ok=True)
            with open(path(ns, id), "w", encoding="utf-8") as f:
                f.write(text)
        else:
            memory.setdefault(ns, {})[id] = text

    def load(ns: str, id: str) -> str | None:
        if args.durable:
            try:
                with open(path(ns, id), encoding="utf-8") as f:
                    return f.read()
            except FileNotFoundError:
                return None
        return memory.get(ns, {}).get(id)

    def drop(ns: str) -> None:
        if args.durable:
            shutil.rmtree(path(ns), ignore_errors=True)
        else:
            memory.pop(ns, None)

    n = 0
    for line in sys.stdin.buffer:
        n += 1
        request = json.loads(line)
        op, seq = request.get("op"), request.get("seq")
        print(f"request {n}: {op} seq={seq}", file=sys.stderr, flush=True)
        if args.chatty:
            sys.stderr.write(("x" * 99 + "\n") * (args.chatty // 100))
            sys.stderr.flush()
        if args.delay:
            time.sleep(args.delay)
        if n == args.crash_on:
            print("fake testee: simulated crash (disk on fire)", file=sys.stderr, flush=True)
            return 3
        if n == args.hang_on:
            print("fake testee: simulated hang", file=sys.stderr, flush=True)
            time.sleep(3600)
        if n == args.close_stdout_on:
            out.close()
            os.close(1)
            time.sleep(3600)
        if n == args.garbage_on:
            out.write(b"hello world\n")
            out.flush()
            continue
        if n == args.invalid_json_on:
            out.write(b'{"seq":%d,"ok":tru\n' % seq)
            out.flush()
            continue
        answer: dict[str, object] = {"seq": seq, "ok": True}
        raw_envelope: str | None = None
        if op == error_op:
            answer = {"seq": seq, "ok": False, "error": {"code": error_code, "message": "no"}}
        elif op == "hello":
            answer.update(name="fake", version="0.1", envelope_versions=[1],
                          capabilities=["durable"] if args.durable else [])
            answer.update(json.loads(args.hello))
        elif op == "write":
            env = request["envelope"]
            store(request["namespace"], env["id"], json.dumps(env, ensure_ascii=False))
        elif op == "read":
            raw_envelope = load(request["namespace"], request["id"])
        elif op == "drop":
            drop(request["namespace"])
        elif op == "bye":
            pass
        else:
            answer = {"seq": seq, "ok": False,
                      "error": {"code": "NOT_SUPPORTED", "message": f"unknown op {op!r}"}}
        if n == args.wrong_seq_on:
            answer["seq"] = seq - 1
        if op == "read" and answer.get("ok"):
            text = "null" if raw_envelope is None else transform(raw_envelope, args)
            body = json.dumps(answer, ensure_ascii=False)[:-1] + ',"envelope":' + text + "}"
        else:
            body = json.dumps(answer, ensure_ascii=False)
        if n == args.dup_seq_on:
            body = f'{{"seq":{seq},' + body[1:]
        data = (body + "\n").encode("utf-8", "surrogatepass")
        out.write(data)
        if n == args.extra_line_on:
            out.write(data)
        out.flush()
        if op == "bye":
            if args.linger_after_bye:
                time.sleep(3600)
            return args.bye_status
        if n == args.deaf_after:
            time.sleep(3600)
        if n == args.exit_after:
            return 4
    if args.ignore_eof:
        time.sleep(60)
    return 0


TS = re.compile(r'"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)\.(\d{3})Z"')


def transform(text: str, args: argparse.Namespace) -> str:
    env = json.loads(text)
    mangle = args.mangle
    if mangle == "timestamp":  # an offset instead of Z
        env["created_at"] = env["created_at"][:-1] + "+00:00"
    elif mangle == "id":
        env["id"] = env["id"].lower()
    elif mangle == "base64":
        env["payload"] = env["payload"].rstrip("=")
    elif mangle == "types":
        env["attempt_count"] = str(env["attempt_count"])
    elif mangle == "dupkey":
        return '{"queue":"other.queue",' + json.dumps(env, ensure_ascii=False)[1:]
    elif mangle == "surrogate":
        env["payload_content_type"] = "\ud800"
        return json.dumps(env)  # ASCII: the lone surrogate becomes the escape \ud800
    if args.variant == "escaped":
        # Allowed differences: key order, ASCII escapes, absent optional fields (C9, C11).
        for key in ("handler_version", "next_attempt_at", "lease_expires_at"):
            if env.get(key) is None:
                env.pop(key, None)
        env = dict(reversed(list(env.items())))
        return json.dumps(env, ensure_ascii=True, indent=None).replace("/", "\\/")
    return json.dumps(env, ensure_ascii=False)


if __name__ == "__main__":
    sys.exit(main())
