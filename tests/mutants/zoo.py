"""The mutant zoo: defective, correct-but-unusual and broken storage plugins.

Every entry is a plugin the kit can load: ``--rdq-plugin=tests.mutants.zoo:<id>``.
A *mutant* carries one real-world storage defect (``system`` says where it comes
from) and names the requirement(s) that must catch it; a *correct* variant differs
from the base only in ways the spec allows and must come out compliant; a *fault*
is a plugin that raises, hangs, crashes or talks garbage, which must end in bounded
time as a named failure. ``tests/mutants/test_zoo.py`` proves all of that and
``python -m tests.mutants.gen_matrix`` publishes the table in docs/mutants.md.

Python adapters bend ``_adapter.DocStorage`` (a correct JSON-document store);
testees are ``tests/mutants/testee.py --defect/--variant NAME`` behind the kit's
stdio bridge.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import os
import re
import struct
import threading
import time
import unicodedata
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any, ClassVar

from rdq_compliance import (
    MAX_ENVELOPE_BYTES,
    TRUNCATION_MARKER,
    Envelope,
    ErrorCode,
    StorageError,
    encode,
    hookimpl,
    to_json,
)

from ._adapter import (
    ATTEMPT_FIELDS,
    ENVELOPE_FIELDS,
    ERROR_FIELDS,
    DocAdapter,
    DocStorage,
    Obj,
    cut_utf8,
    dumps,
    format_ts,
    map_json_numbers,
    map_model_timestamps,
    map_strings,
    map_timestamps,
    map_unknown_values,
    parse_ts,
    unknown_containers,
    walk_docs,
)
from ._entries import Entry, Kind, Via

__all__ = ["ENTRIES", "by_id"]

ENTRIES: list[Entry] = []
_PLUGINS: dict[str, object] = {}

M, R, T = "RDQ-", "RDQ-RT-", "RDQ-TR-"


# -- plugin objects -----------------------------------------------------------------------


class AdapterPlugin:
    """The pluggy plugin object of a Python adapter entry."""

    def __init__(self, entry: Entry, factory: Callable[[str], Any]) -> None:
        self.entry = entry
        self.factory = factory

    @hookimpl
    def rdq_storage_open(self, options: Mapping[str, str]) -> Any:
        return self.factory(self.entry.id)


class TesteePlugin:
    """The pluggy plugin object of a testee entry: the kit's own stdio bridge, pointed
    at ``testee.py`` with this entry's arguments and its own state directory (so many
    testees can share one kit run, each under its own label)."""

    def __init__(self, entry: Entry) -> None:
        self.entry = entry

    def state_dir(self) -> str:
        # Under the kit run's working directory: the same on every reopen (the C15
        # restart check) and in the new process that reads the store (C15 too).
        return os.path.abspath(os.path.join(".rdq", f"zoo-testee-{self.entry.id}"))

    @hookimpl
    def rdq_storage_open(self, options: Mapping[str, str]) -> Any:
        from rdq_compliance.storage import _stdio

        resolved = {s.name: s.default or "" for s in _stdio.rdq_storage_options()}
        resolved.update(
            command=self.entry.testee_command,
            timeout=str(self.entry.bridge_timeout),
            state_dir=self.state_dir(),
        )
        return _stdio.rdq_storage_open(resolved)


def _add(entry: Entry, plugin: object) -> None:
    if entry.id in _PLUGINS or not entry.id.isidentifier():
        raise ValueError(f"zoo entry id={entry.id!r} is a duplicate or not an identifier")
    ENTRIES.append(entry)
    _PLUGINS[entry.id] = plugin
    globals()[entry.id] = plugin  # --rdq-plugin=tests.mutants.zoo:<id>


def adapter(
    id: str, kind: Kind, system: str, defect: str, catches: tuple[str, ...] = (), **kw: Any
) -> Callable[[type[DocStorage]], type[DocStorage]]:
    """Class decorator: register a DocStorage subclass as a zoo entry."""

    def register(cls: type[DocStorage]) -> type[DocStorage]:
        entry = Entry(id, kind, Via.ADAPTER, system, defect, catches, **kw)
        _add(entry, AdapterPlugin(entry, cls))
        return cls

    return register


def mutant(id: str, system: str, defect: str, *catches: str, **kw: Any) -> Any:
    return adapter(id, Kind.MUTANT, system, defect, catches, **kw)


def testee(id: str, kind: Kind, system: str, defect: str, args: tuple[str, ...],
           catches: tuple[str, ...] = (), **kw: Any) -> None:
    entry = Entry(id, kind, Via.TESTEE, system, defect, catches, testee_args=args, **kw)
    _add(entry, TesteePlugin(entry))


def by_id(id: str) -> Entry:
    for e in ENTRIES:
        if e.id == id:
            return e
    raise KeyError(id)


def _clamp(fn: Callable[[datetime], datetime]) -> Callable[[datetime], datetime]:
    """Rounding up past 9999-12-31 overflows datetime: such a store keeps the maximum."""

    def safe(dt: datetime) -> datetime:
        try:
            return fn(dt)
        except OverflowError:
            return datetime(9999, 12, 31, 23, 59, 59, 999000, tzinfo=UTC)

    return safe


def _ts_map(fn: Callable[[datetime], datetime]) -> Callable[[Obj], Obj]:
    def on_doc(doc: Obj) -> Obj:
        return map_timestamps(doc, lambda t: format_ts(_clamp(fn)(parse_ts(t))))

    return on_doc


# =========================================================================================
# Mutants: Python adapters
# =========================================================================================

# -- timestamps (C3) ---------------------------------------------------------------------


@mutant("mysql_datetime_no_fsp", "MySQL/MariaDB DATETIME column without fractional seconds",
        "cuts the milliseconds off every timestamp", R + "007", M + "GOLD-001")
class MysqlDatetimeNoFsp(DocStorage):
    def on_write(self, doc: Obj) -> Obj:
        return _ts_map(lambda d: d.replace(microsecond=0))(doc)


@mutant("mysql_fsp_rounding", "MySQL >= 5.6.4 inserting into DATETIME(0): rounds, not cuts",
        "rounds every timestamp to the nearest second", R + "007")
class MysqlFspRounding(DocStorage):
    def on_write(self, doc: Obj) -> Obj:
        return _ts_map(lambda d: (d + timedelta(milliseconds=500)).replace(microsecond=0))(doc)


@mutant("sqlserver_datetime", "SQL Server `datetime` type (1/300 s ticks: .000/.003/.007)",
        "rounds milliseconds to the 1/300 s grid", R + "007")
class SqlServerDatetime(DocStorage):
    def on_write(self, doc: Obj) -> Obj:
        def tick(d: datetime) -> datetime:
            ms = d.microsecond // 1000
            ticks = round(ms * 300 / 1000)
            return d.replace(microsecond=0) + timedelta(milliseconds=round(ticks * 1000 / 300))

        return _ts_map(tick)(doc)


@mutant("sqlite_julianday", "SQLite julianday() REAL column (float days since 4713 BC)",
        "returns timestamps with sub-millisecond float noise", R + "007")
class SqliteJulianday(DocStorage):
    def on_model(self, env: Envelope) -> Any:
        def julian(d: datetime) -> datetime:
            jd = d.timestamp() / 86400 + 2440587.5
            try:
                return datetime.fromtimestamp((jd - 2440587.5) * 86400, UTC)
            except (OverflowError, ValueError, OSError):
                return d

        return map_model_timestamps(env, julian)


@mutant("local_tz_shift", "naive DATETIME written in local time (UTC-3) and read as UTC",
        "shifts every timestamp by three hours", R + "001", R + "007")
class LocalTzShift(DocStorage):
    def on_write(self, doc: Obj) -> Obj:
        return _ts_map(lambda d: d - timedelta(hours=3))(doc)


def _last_sunday(year: int, month: int) -> datetime:
    """01:00 UTC on the last Sunday of ``month``: when every European zone's clocks
    turn (EU rule)."""
    day = datetime(year + month // 12, month % 12 + 1, 1, 1, tzinfo=UTC) - timedelta(days=1)
    return day - timedelta(days=(day.weekday() + 1) % 7)


def _cet_offset(instant: datetime) -> timedelta:
    summer = _last_sunday(instant.year, 3) <= instant < _last_sunday(instant.year, 10)
    return timedelta(hours=2 if summer else 1)


def _berlin_wall_clock(instant: datetime, *, later: bool = False) -> datetime:
    """``instant`` kept as Berlin's wall-clock time and read back: a wall-clock time
    the clocks show twice (02:00-03:00 on the night they fall back) resolves to its
    first pass, as a DATETIME column that keeps no offset does, or with ``later`` to its
    second, as PostgreSQL reads an ambiguous local time (standard time). The last hour of
    year 9999, past the end of a datetime in Berlin, is kept as it is (one defect only)."""
    if instant > datetime(9999, 12, 31, 22, tzinfo=UTC):
        return instant
    local = instant + _cet_offset(instant)
    summer, winter = timedelta(hours=2), timedelta(hours=1)
    first, other = (winter, summer) if later else (summer, winter)
    guess = local - first
    return guess if _cet_offset(guess) == first else local - other


@mutant("dst_fold_local_time", "a DATETIME column written and read in the server's zone "
        "(Europe/Berlin: JDBC's default calendar, MySQL's session time_zone)",
        "reads instants in the repeated hour when clocks fall back an hour early", R + "007")
class DstFoldLocalTime(DocStorage):
    def on_write(self, doc: Obj) -> Obj:
        return _ts_map(_berlin_wall_clock)(doc)


@mutant("dst_fold_later_offset", "a `timestamp without time zone` written as the server's "
        "wall-clock time (Europe/Berlin) and read back with `AT TIME ZONE`: PostgreSQL "
        "takes an ambiguous local time as standard time", "reads instants in the first pass "
        "of the repeated hour when clocks fall back an hour late", R + "007")
class DstFoldLaterOffset(DocStorage):
    def on_write(self, doc: Obj) -> Obj:
        return _ts_map(lambda instant: _berlin_wall_clock(instant, later=True))(doc)


@mutant("mysql_timestamp_null_is_now", "MySQL before 8.0 with explicit_defaults_for_timestamp "
        "off: the table's first TIMESTAMP column (next_attempt_at) is NOT NULL DEFAULT "
        "CURRENT_TIMESTAMP, and NULL written to it stores the current time",
        "reads a null next_attempt_at back as the time it was written", R + "007")
class MysqlTimestampNullIsNow(DocStorage):
    def on_write(self, doc: Obj) -> Obj:
        if doc["next_attempt_at"] is None:
            now = datetime.now(UTC)
            doc["next_attempt_at"] = format_ts(now.replace(microsecond=now.microsecond // 1000
                                                           * 1000))
        return doc


@mutant("mysql_timestamp_y2038", "MySQL TIMESTAMP column (32-bit epoch seconds)",
        "clamps instants after 2038-01-19T03:14:07Z", R + "007")
class MysqlTimestampY2038(DocStorage):
    def on_write(self, doc: Obj) -> Obj:
        limit = datetime(2038, 1, 19, 3, 14, 7, tzinfo=UTC)
        return _ts_map(lambda d: min(d, limit))(doc)


@mutant("max_instant_clamp", "a '9999-12-31 23:59:59' end-of-time sentinel (Java/ORM code)",
        "clamps the last second of year 9999 to 23:59:59.000", R + "007")
class MaxInstantClamp(DocStorage):
    def on_write(self, doc: Obj) -> Obj:
        limit = datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC)
        return _ts_map(lambda d: min(d, limit))(doc)


@mutant("pymysql_naive_datetime", "PyMySQL/sqlite3 return naive datetime objects",
        "returns timestamps without tzinfo", R + "004")
class PymysqlNaiveDatetime(DocStorage):
    def on_model(self, env: Envelope) -> Any:
        return map_model_timestamps(env, lambda d: d.replace(tzinfo=None))


# -- free-text strings (C4) ----------------------------------------------------------------


_NUMERIC_TEXT = re.compile(r"\s*[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?\s*")


def _numeric_affinity(value: Any) -> Any:
    if not isinstance(value, str) or not _NUMERIC_TEXT.fullmatch(value):
        return value
    number = float(value)
    return str(int(number)) if number.is_integer() and abs(number) < 2**63 else repr(number)


@mutant("sqlite_numeric_affinity", "SQLite columns whose declared type gives them NUMERIC "
        "affinity (JSON, DATETIME, DECIMAL, VERSION: no INT, CHAR, CLOB, TEXT, BLOB, REAL, "
        "FLOA or DOUB in the name) holding handler_version and header values",
        "keeps text that looks like a number as that number ('007.50' reads back as '7.5')",
        R + "006")
class SqliteNumericAffinity(DocStorage):
    def on_write(self, doc: Obj) -> Obj:
        doc["handler_version"] = _numeric_affinity(doc["handler_version"])
        doc["headers"] = {k: _numeric_affinity(v) for k, v in doc["headers"].items()}
        return doc


@mutant("mysql_utf8mb3", "MySQL `utf8` (3-byte utf8mb3) column, non-strict sql_mode",
        "replaces astral-plane characters with '?'", R + "006")
class MysqlUtf8mb3(DocStorage):
    def on_write(self, doc: Obj) -> Obj:
        return map_strings(doc, lambda s: "".join("?" if ord(c) > 0xFFFF else c for c in s))


@mutant("postgres_text_nul", "PostgreSQL text/jsonb cannot hold U+0000; the driver strips it",
        "drops U+0000 from every string", R + "006")
class PostgresTextNul(DocStorage):
    def on_write(self, doc: Obj) -> Obj:
        return map_strings(doc, lambda s: s.replace("\x00", ""))


@mutant("postgres_jsonb_rejects_nul", "PostgreSQL jsonb: 'unsupported Unicode escape "
        "sequence \\u0000'", "refuses valid envelopes holding U+0000 (INTERNAL)", R + "006")
class PostgresJsonbRejectsNul(DocStorage):
    def on_write(self, doc: Obj) -> Obj:
        if "\\u0000" in json.dumps(doc):
            raise StorageError(ErrorCode.INTERNAL, "unsupported Unicode escape sequence \\u0000")
        return doc


@mutant("char_pad_space", "CHAR(n)/PAD SPACE collations (MySQL, SQL Server, Oracle CHAR)",
        "strips trailing spaces from every string", R + "006")
class CharPadSpace(DocStorage):
    def on_write(self, doc: Obj) -> Obj:
        return map_strings(doc, lambda s: s.rstrip(" "))


@mutant("nfc_normalization", "macOS file names / Java Normalizer / some ORMs normalize to NFC",
        "normalizes every string to Unicode NFC", R + "006")
class NfcNormalization(DocStorage):
    def on_write(self, doc: Obj) -> Obj:
        return map_strings(doc, lambda s: unicodedata.normalize("NFC", s))


@mutant("latin1_mojibake", "MySQL latin1 connection charset over a utf8mb4 table",
        "double-encodes non-ASCII text (é becomes Ã©)", R + "006")
class Latin1Mojibake(DocStorage):
    def on_read(self, doc: Obj) -> Obj:
        return map_strings(doc, lambda s: s.encode("utf-8").decode("latin-1"))


@mutant("crlf_to_lf", "text-mode I/O and line-ending normalization (Windows, HTTP forms)",
        "turns CR LF into LF in every string", R + "006")
class CrlfToLf(DocStorage):
    def on_write(self, doc: Obj) -> Obj:
        return map_strings(doc, lambda s: s.replace("\r\n", "\n"))


@mutant("mysql_strict_utf8mb3", "MySQL `utf8` (3-byte utf8mb3) column, strict sql_mode: "
        "error 1366 'Incorrect string value'", "refuses envelopes holding astral characters",
        R + "006")
class MysqlStrictUtf8mb3(DocStorage):
    def on_write(self, doc: Obj) -> Obj:
        if any(ord(c) > 0xFFFF for c in json.dumps(doc, ensure_ascii=False)):
            raise StorageError(ErrorCode.INTERNAL, "(1366, \"Incorrect string value: "
                               "'\\xF0\\x9F\\x98\\x80' for column 'doc' at row 1\")")
        return doc


# -- numbers in unknown fields and detail (C5) ----------------------------------------------


@mutant("int64_as_double", "MongoDB via the JS driver, JSON.parse in any JavaScript plugin",
        "turns integers beyond 2^53 into doubles", M + "UF-005")
class Int64AsDouble(DocStorage):
    def on_write(self, doc: Obj) -> Obj:
        return map_json_numbers(doc, lambda n: float(n) if isinstance(n, int) and abs(n) > 2**53
                                else n)


@mutant("js_number_precision", "JavaScript Number: integers rounded to 53-bit precision",
        "rounds integers beyond 2^53 to the nearest double value", M + "UF-005")
class JsNumberPrecision(DocStorage):
    def on_write(self, doc: Obj) -> Obj:
        return map_json_numbers(
            doc, lambda n: int(float(n)) if isinstance(n, int) and abs(n) > 2**53 else n
        )


@mutant("float_15_digits", "doubles printed with 15 significant digits (MySQL FLOAT text, "
        "PHP precision=14)", "loses the last digits of doubles", M + "UF-005")
class Float15Digits(DocStorage):
    def on_write(self, doc: Obj) -> Obj:
        return map_json_numbers(doc, lambda n: float(f"{n:.15g}") if isinstance(n, float) else n)


@mutant("mysql_float_single", "MySQL/SQL FLOAT or REAL (4-byte single precision) column",
        "stores doubles as 32-bit floats", M + "UF-005")
class MysqlFloatSingle(DocStorage):
    def on_write(self, doc: Obj) -> Obj:
        def single(n: int | float) -> int | float:
            if not isinstance(n, float):
                return n
            try:
                return float(struct.unpack("f", struct.pack("f", n))[0])
            except OverflowError:
                return n

        return map_json_numbers(doc, single)


@mutant("mysql_boolean_tinyint", "MySQL BOOLEAN = TINYINT(1) in a decomposed unknown-field table",
        "turns true/false inside unknown fields and detail into 1/0", M + "UF-001", M + "UF-006")
class MysqlBooleanTinyint(DocStorage):
    def on_write(self, doc: Obj) -> Obj:
        return map_unknown_values(doc, lambda v: int(v) if isinstance(v, bool) else v)


@mutant("known_int_as_float", "SQLite REAL / JavaScript numbers for counters",
        "returns attempt_count and redrive_count as float", R + "004")
class KnownIntAsFloat(DocStorage):
    def on_model(self, env: Envelope) -> Any:
        return replace(env, attempt_count=float(env.attempt_count),  # type: ignore[arg-type]  # the defect
                       redrive_count=float(env.redrive_count))  # type: ignore[arg-type]  # the defect


@mutant("counters_as_decimal", "MySQL DECIMAL/NUMERIC counter columns read through PyMySQL "
        "or mysqlclient (and SQLAlchemy Numeric): decimal.Decimal values",
        "returns attempt_count and redrive_count as decimal.Decimal", R + "004")
class CountersAsDecimal(DocStorage):
    def on_model(self, env: Envelope) -> Any:
        return replace(env, attempt_count=Decimal(env.attempt_count),  # type: ignore[arg-type]  # the defect
                       redrive_count=Decimal(env.redrive_count))  # type: ignore[arg-type]  # the defect


# -- ids, payload (C6, C7) -----------------------------------------------------------------


@mutant("id_lowercase", "a case-insensitive id column that normalizes to lower case",
        "returns the id in lower case", R + "004")
class IdLowercase(DocStorage):
    def key(self, id: str) -> str:
        return id.lower()

    def on_write(self, doc: Obj) -> Obj:
        doc["id"] = doc["id"].lower()
        return doc


@mutant("empty_payload_null", "Oracle/ORMs storing an empty BLOB as NULL",
        "reads the empty payload back as None", R + "008")
class EmptyPayloadNull(DocStorage):
    def on_model(self, env: Envelope) -> Any:
        return replace(env, payload=None) if env.payload == b"" else env  # type: ignore[arg-type]  # the defect


@mutant("payload_mime_base64", "payload re-encoded by a MIME encoder (Java's "
        "Base64.getMimeEncoder(), Python's base64.encodebytes)", "returns payloads longer than "
        "57 bytes as base64 broken into lines of 76 characters", R + "008")
class PayloadMimeBase64(DocStorage):
    def on_read(self, doc: Obj) -> Obj:
        raw = base64.b64decode(doc["payload"])
        if len(raw) > 57:
            doc["payload"] = base64.encodebytes(raw).decode().rstrip("\n")
        return doc


@mutant("payload_base64url", "payload kept as URL-safe base64, decoded with the standard "
        "alphabet (non-validating decoder)", "mangles payload bytes that encode to + or /",
        R + "008")
class PayloadBase64Url(DocStorage):
    def on_write(self, doc: Obj) -> Obj:
        doc["payload"] = base64.urlsafe_b64encode(base64.b64decode(doc["payload"])).decode()
        return doc

    def on_read(self, doc: Obj) -> Obj:
        raw = base64.b64decode(doc["payload"] + "==", validate=False)  # drops - and _
        doc["payload"] = base64.b64encode(raw).decode()
        return doc


@mutant("payload_as_text", "payload in a TEXT column instead of BLOB/bytea",
        "replaces invalid UTF-8 in the payload with U+FFFD", R + "008")
class PayloadAsText(DocStorage):
    def on_write(self, doc: Obj) -> Obj:
        raw = base64.b64decode(doc["payload"]).decode("utf-8", "replace").encode("utf-8")
        doc["payload"] = base64.b64encode(raw).decode()
        return doc


@mutant("payload_nul_trimmed", "C-string handling of BINARY(n) padding (rstrip of 0x00)",
        "drops trailing zero bytes of the payload", R + "008")
class PayloadNulTrimmed(DocStorage):
    def on_model(self, env: Envelope) -> Any:
        return replace(env, payload=env.payload.rstrip(b"\x00"))


@mutant("psycopg_memoryview", "psycopg returns bytea as memoryview",
        "returns the payload as memoryview instead of bytes", R + "004")
class PsycopgMemoryview(DocStorage):
    def on_model(self, env: Envelope) -> Any:
        return replace(env, payload=memoryview(env.payload))  # type: ignore[arg-type]  # the defect


class _DataError(Exception):
    """What psycopg raises for bytes a UTF-8 text column cannot hold (psycopg.DataError)."""


@mutant("payload_text_rejects_binary", "payload in a PostgreSQL TEXT column: psycopg "
        "DataError 'invalid byte sequence for encoding \"UTF8\"'",
        "raises on payloads that are not valid UTF-8", R + "008")
class PayloadTextRejectsBinary(DocStorage):
    def on_write(self, doc: Obj) -> Obj:
        raw = base64.b64decode(doc["payload"])
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise _DataError(f'invalid byte sequence for encoding "UTF8": 0x{raw[exc.start]:02x}'
                             ) from None
        return doc


# -- headers (C8) ---------------------------------------------------------------------------


@mutant("header_keys_casefold", "case-insensitive collation / HTTP-style header maps",
        "lower-cases header keys (so 'A' and 'a' collide)", R + "009")
class HeaderKeysCasefold(DocStorage):
    def on_write(self, doc: Obj) -> Obj:
        doc["headers"] = {k.lower(): v for k, v in doc["headers"].items()}
        return doc


@mutant("header_key_pad_space", "headers as rows of a side table keyed by (task, key) in "
        "MySQL's utf8mb4_bin, chosen to tell case apart, which is a PAD SPACE collation, "
        "upserted", "merges header keys that differ only in trailing spaces ('k' and 'k ': "
        "the first key stays, the last value wins)", R + "009")
class HeaderKeyPadSpace(DocStorage):
    def on_write(self, doc: Obj) -> Obj:
        kept: dict[str, str] = {}
        headers: dict[str, Any] = {}
        for key, value in doc["headers"].items():
            row = kept.setdefault(key.rstrip(" "), key)
            headers[row] = value
        doc["headers"] = headers
        return doc


@mutant("header_empty_key_dropped", "HTTP/form-style header libraries reject empty names",
        "drops the header with the empty key", R + "009")
class HeaderEmptyKeyDropped(DocStorage):
    def on_write(self, doc: Obj) -> Obj:
        doc["headers"] = {k: v for k, v in doc["headers"].items() if k != ""}
        return doc


@mutant("headers_empty_map_null", "Go nil map / ORM hstore: the empty map comes back as NULL",
        "returns None for an empty header map", R + "009")
class HeadersEmptyMapNull(DocStorage):
    def on_model(self, env: Envelope) -> Any:
        return replace(env, headers=None) if not env.headers else env  # type: ignore[arg-type]  # the defect


@mutant("mongodb_dotted_keys", "MongoDB < 5.0 rejects field names containing '.' or "
        "starting with '$'", "refuses envelopes with dotted keys (rdq.source!)", R + "009")
class MongodbDottedKeys(DocStorage):
    def on_write(self, doc: Obj) -> Obj:
        def bad(v: Any) -> bool:
            if isinstance(v, dict):
                return any("." in k or k.startswith("$") or bad(x) for k, x in v.items())
            if isinstance(v, list):
                return any(bad(x) for x in v)
            return False

        if bad(doc["headers"]) or any(bad({k: obj[k]}) for obj, k in unknown_containers(doc)):
            raise StorageError(ErrorCode.INVALID_ENVELOPE, "field names must not contain '.'")
        return doc


# -- null, empty, absent (C9) ----------------------------------------------------------------


@mutant("null_error_dereferenced", "a reader that maps every attempt's error without a null "
        "check (Java's attempt.getError().getType(), Go's a.Error.Type on a nil pointer)",
        "raises on reading any envelope with an attempt whose error is null", R + "010")
class NullErrorDereferenced(DocStorage):
    def on_read(self, doc: Obj) -> Obj:
        for attempt in doc["attempts"]:
            attempt["error"]["type"]  # TypeError for an attempt without an error
        return doc


def _empty_to_null(v: Any) -> Any:
    if v == "":
        return None
    if isinstance(v, dict):
        return {k: _empty_to_null(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_empty_to_null(x) for x in v]
    return v


@mutant("oracle_empty_string_null", "Oracle: '' IS NULL in VARCHAR2 columns",
        'stores "" as null (handler_version, stack, unknown fields)', R + "010")
class OracleEmptyStringNull(DocStorage):
    def on_write(self, doc: Obj) -> Obj:
        if doc.get("handler_version") == "":
            doc["handler_version"] = None
        for obj, known in walk_docs(doc):
            if known is ERROR_FIELDS and obj.get("stack") == "":
                obj["stack"] = None
        for obj, key in list(unknown_containers(doc)):
            obj[key] = _empty_to_null(obj[key])
        return doc


@mutant("not_null_default_empty", "NOT NULL DEFAULT '' columns (MySQL habit)",
        'reads null handler_version and stack back as ""', R + "010")
class NotNullDefaultEmpty(DocStorage):
    def on_write(self, doc: Obj) -> Obj:
        if doc.get("handler_version") is None:
            doc["handler_version"] = ""
        for obj, known in walk_docs(doc):
            if known is ERROR_FIELDS and obj.get("stack") is None:
                obj["stack"] = ""
        return doc


@mutant("go_nil_slice_null", "Go: a nil slice or map marshals as null",
        "turns {} and [] inside unknown fields and detail into null", R + "010")
class GoNilSliceNull(DocStorage):
    def on_write(self, doc: Obj) -> Obj:
        return map_unknown_values(doc, lambda v: None if v == {} or v == [] else v)


def _as_set(value: Any) -> Any:
    """A list of strings (or of numbers) as a DynamoDB String (Number) Set gives it back:
    each value once, in the set's order (sorted here)."""
    if isinstance(value, list) and value and (
            all(isinstance(v, str) for v in value) or all(
                isinstance(v, int | float) and not isinstance(v, bool) for v in value)):
        return sorted(set(value))
    return value


@mutant("dynamodb_string_sets", "DynamoDB through boto3: lists of strings or numbers kept as "
        "String and Number Sets (a Python set serializes as SS/NS)",
        "returns arrays of strings or numbers inside unknown fields and detail sorted, each "
        "value once", M + "UF-001")
class DynamodbStringSets(DocStorage):
    def on_write(self, doc: Obj) -> Obj:
        return map_unknown_values(doc, _as_set)


@mutant("redis_hash_json_loads", "unknown top-level fields as fields of the task's Redis "
        "hash: a string stored as it is, any other value as its JSON; each read back with "
        "json.loads, the string itself where that fails", "turns unknown top-level strings "
        "that hold JSON ('5', 'null', '\"a\"') into that JSON", M + "UF-001")
class RedisHashJsonLoads(DocStorage):
    def on_write(self, doc: Obj) -> Obj:
        for key, value in list(doc.items()):
            if key not in ENVELOPE_FIELDS and isinstance(value, str):
                with contextlib.suppress(ValueError):  # not JSON: the string itself
                    doc[key] = json.loads(value)
        return doc


def _camel_keys(value: Any) -> Any:
    if isinstance(value, dict):
        return {re.sub("_+([A-Za-z0-9])", lambda m: m.group(1).upper(), k): _camel_keys(v)
                for k, v in value.items()}
    if isinstance(value, list):
        return [_camel_keys(v) for v in value]
    return value


@mutant("camelcase_keys_deep", "a Node.js plugin on PostgreSQL through knex with "
        "postProcessResponse: camelcase-keys {deep: true}, which reaches into the JSONB "
        "document", "turns every snake_case key of unknown fields and detail into camelCase "
        "(x_text becomes xText), at every level", M + "UF-001", M + "UF-003")
class CamelcaseKeysDeep(DocStorage):
    def on_write(self, doc: Obj) -> Obj:
        for obj, key in list(unknown_containers(doc)):
            value = _camel_keys(obj.pop(key))
            obj[key if key == "detail" else _camel_keys({key: None}).popitem()[0]] = value
        return doc


@mutant("php_empty_object_as_array", "PHP: json_decode($json, true) then json_encode(): an "
        "empty object decodes to an empty array, which encodes as []",
        "turns {} inside unknown fields and detail into []", R + "010")
class PhpEmptyObjectAsArray(DocStorage):
    def on_write(self, doc: Obj) -> Obj:
        return map_unknown_values(doc, lambda v: [] if v == {} else v)


@mutant("jackson_non_null_unknown", "Jackson @JsonInclude(NON_NULL) on the residual map",
        "drops unknown fields whose value is null (payload_ref: null too)", M + "UF-001",
        M + "UF-004")
class JacksonNonNullUnknown(DocStorage):
    def on_write(self, doc: Obj) -> Obj:
        for obj, known in walk_docs(doc):
            for k in [k for k in obj if k not in known and obj[k] is None]:
                del obj[k]
        return doc


# -- unknown fields (C10) ----------------------------------------------------------------


def _drop_unknown(level: frozenset[str]) -> Callable[[Obj], Obj]:
    def on_doc(doc: Obj) -> Obj:
        for obj, known in walk_docs(doc):
            if known is level:
                for k in [k for k in obj if k not in known]:
                    del obj[k]
        return doc

    return on_doc


@mutant("drop_unknown_top", "a typed struct/table per known field and no residual column",
        "drops unknown top-level fields", M + "UF-001")
class DropUnknownTop(DocStorage):
    on_write = staticmethod(_drop_unknown(ENVELOPE_FIELDS))  # type: ignore[assignment]


@mutant("mongodb_id_returned", "MongoDB find_one() without a projection: the document "
        "comes back with the _id the server added", "adds an unknown top-level field '_id' "
        "to every envelope read", M + "UF-001")
class MongodbIdReturned(DocStorage):
    def on_read(self, doc: Obj) -> Obj:
        doc["_id"] = {"$oid": hashlib.md5(doc["id"].encode()).hexdigest()[:24]}
        return doc


@mutant("mongodb_id_is_the_task_id", "MongoDB: the task stored with _id set to its id "
        "(insert_one({**doc, '_id': id}), replace_one by _id) and _id left out on read "
        "(projection {'_id': 0})", "an unknown top-level field '_id' is overwritten on write "
        "and lost on read", M + "UF-001")
class MongodbIdIsTheTaskId(DocStorage):
    def on_write(self, doc: Obj) -> Obj:
        doc["_id"] = doc["id"]
        return doc

    def on_read(self, doc: Obj) -> Obj:
        doc.pop("_id", None)
        return doc


@mutant("cosmos_partition_and_system_properties", "Azure Cosmos DB: the namespace stored "
        "as the item's partition key property 'namespace'; read strips it and the system "
        "properties Cosmos adds (every key starting with '_': _rid, _self, _etag, "
        "_attachments, _ts)", "unknown top-level fields named 'namespace' or starting with "
        "'_' are lost", M + "UF-001")
class CosmosPartitionAndSystemProperties(DocStorage):
    def write(self, namespace: str, env: Envelope) -> None:
        doc = {**to_json(env), "namespace": namespace}
        self.store(self.table(namespace), self.key(env.id), doc)

    def on_read(self, doc: Obj) -> Obj:
        return {k: v for k, v in doc.items() if k != "namespace" and not k.startswith("_")}


@mutant("drop_unknown_attempt", "an attempts table with a column per known field",
        "drops unknown fields of attempt records", M + "UF-002")
class DropUnknownAttempt(DocStorage):
    on_write = staticmethod(_drop_unknown(ATTEMPT_FIELDS))  # type: ignore[assignment]


@mutant("drop_unknown_error", "error object mapped to a fixed class (Go struct, Java POJO)",
        "drops unknown fields of the error object", M + "UF-003")
class DropUnknownError(DocStorage):
    on_write = staticmethod(_drop_unknown(ERROR_FIELDS))  # type: ignore[assignment]


@mutant("unknown_fields_one_insert", "unknown fields as rows of a key-value side table, all "
        "inserted by one statement (SQLite binds at most 32,766 parameters: 10,922 rows of "
        "three)", "refuses an object with more than 10,922 unknown fields", M + "UF-001",
        M + "UF-002", M + "UF-003")
class UnknownFieldsOneInsert(DocStorage):
    def admit(self, env: Envelope) -> None:
        objects: list[Mapping[str, Any]] = [env.extra]
        for a in env.attempts:
            objects += [a.extra] if a.error is None else [a.extra, a.error.extra]
        if any(3 * len(extra) > 32_766 for extra in objects):
            raise StorageError(ErrorCode.INTERNAL, "too many SQL variables")


@mutant("unknown_name_varchar_255", "unknown fields as rows of a side table whose `name` "
        "column is VARCHAR(255) (MySQL, non-strict sql_mode)", "cuts unknown field names "
        "to 255 bytes", R + "011")
class UnknownNameVarchar255(DocStorage):
    def on_write(self, doc: Obj) -> Obj:
        for obj, known in list(walk_docs(doc)):
            for key in [k for k in obj if k not in known and len(k.encode("utf-8")) > 255]:
                obj[cut_utf8(key, 255)] = obj.pop(key)
        return doc


@mutant("unknown_name_ci_collation", "unknown fields as rows of a side table keyed by "
        "(task, name), upserted, in SQL Server's default collation "
        "SQL_Latin1_General_CP1_CI_AS (case-insensitive; = ignores trailing spaces)",
        "merges unknown fields whose names differ only in case or trailing spaces (the "
        "first name stays, the last value wins)", M + "UF-001", M + "UF-002", M + "UF-003")
class UnknownNameCiCollation(DocStorage):
    def on_write(self, doc: Obj) -> Obj:
        for obj, known in list(walk_docs(doc)):
            first: dict[str, str] = {}
            for key in [k for k in obj if k not in known]:
                row = first.setdefault(key.casefold().rstrip(" "), key)
                if row != key:
                    obj[row] = obj.pop(key)
        return doc


@mutant("go_case_insensitive_unmarshal", "a Go plugin reading its document (a TEXT column, "
        "known fields first, then the residual map) with encoding/json, which matches an "
        "object's keys to struct fields ignoring case; the residual map keeps every key not "
        "named exactly", "an unknown field named like a known one but for case ('ID', "
        "'Message') overwrites that known field on read", M + "UF-001", M + "UF-002",
        M + "UF-003")
class GoCaseInsensitiveUnmarshal(DocStorage):
    def on_read(self, doc: Obj) -> Obj:
        for obj, known in list(walk_docs(doc)):
            by_fold = {f.casefold(): f for f in known}
            for key in [k for k in obj if k not in known]:
                field = by_fold.get(key.casefold())
                if field is not None:  # the later key wins, as it does in Go
                    obj[field] = obj[key]
        return doc


@mutant("drop_payload_ref", "a plugin that 'knows' payload_ref is reserved and unused in v1",
        "discards payload_ref", M + "UF-004")
class DropPayloadRef(DocStorage):
    def on_write(self, doc: Obj) -> Obj:
        doc.pop("payload_ref", None)
        return doc


@mutant("detail_stringified", "error.detail in a TEXT column, never parsed back",
        "returns detail as a JSON string", M + "UF-006")
class DetailStringified(DocStorage):
    def on_write(self, doc: Obj) -> Obj:
        for obj, known in walk_docs(doc):
            if known is ERROR_FIELDS and obj.get("detail") is not None:
                obj["detail"] = dumps(obj["detail"])
        return doc


@mutant("detail_dropped", "an error model without a detail field (a Go struct, an ORM "
        "class mapped to type/message/stack columns)", "loses error.detail (reads back null)",
        M + "UF-006")
class DetailDropped(DocStorage):
    def on_write(self, doc: Obj) -> Obj:
        for obj, known in walk_docs(doc):
            if known is ERROR_FIELDS and "detail" in obj:
                obj["detail"] = None
        return doc


def _json_depth(doc: Obj) -> int:
    """The deepest nesting of an unknown field or ``detail`` value (1 for ``[]``)."""
    best = 0
    stack = [(obj[key], 1) for obj, key in unknown_containers(doc)]
    while stack:
        value, level = stack.pop()
        if isinstance(value, dict | list):
            best = max(best, level)
            items = value.values() if isinstance(value, dict) else value
            stack.extend((item, level + 1) for item in items)
    return best


@mutant("mysql_json_depth_100", "MySQL JSON column: ER_JSON_DOCUMENT_TOO_DEEP above 100 "
        "levels (MongoDB BSON refuses the same)", "refuses envelopes whose unknown fields or "
        "detail nest deeper than 100 levels (INTERNAL)", M + "UF-007", M + "GOLD-001")
class MysqlJsonDepth100(DocStorage):
    def on_write(self, doc: Obj) -> Obj:
        if _json_depth(doc) + 1 > 100:  # the value sits one level inside the document
            raise StorageError(ErrorCode.INTERNAL,
                               "The JSON document exceeds the maximum depth of 100")
        return doc


@mutant("serde_json_depth_128", "Rust serde_json reading the stored document back: "
        "'recursion limit exceeded' past 128 levels", "stores deep values but cannot read "
        "them back (INTERNAL on read)", M + "UF-007")
class SerdeJsonDepth128(DocStorage):
    def on_read(self, doc: Obj) -> Obj:
        if _json_depth(doc) + 1 > 128:
            raise StorageError(ErrorCode.INTERNAL, "recursion limit exceeded at line 1")
        return doc


# -- attempts (C12) --------------------------------------------------------------------------


@mutant("attempts_order_by_no", "SELECT ... FROM attempts ORDER BY attempt_no",
        "sorts attempts by attempt_no", R + "005")
class AttemptsOrderByNo(DocStorage):
    def on_read(self, doc: Obj) -> Obj:
        doc["attempts"].sort(key=lambda a: a["attempt_no"])
        return doc


@mutant("attempts_pk_attempt_no", "PRIMARY KEY (task_id, attempt_no) with upsert",
        "merges attempts that share an attempt_no (last one wins)", R + "005")
class AttemptsPkAttemptNo(DocStorage):
    def on_write(self, doc: Obj) -> Obj:
        rows: dict[int, Obj] = {}
        for a in doc["attempts"]:
            rows[a["attempt_no"]] = a
        doc["attempts"] = list(rows.values())
        return doc


@mutant("redis_lpush_attempts", "Redis LPUSH + LRANGE 0 -1 for the attempt list",
        "returns attempts newest first", R + "005")
class RedisLpushAttempts(DocStorage):
    def on_read(self, doc: Obj) -> Obj:
        doc["attempts"].reverse()
        return doc


@mutant("redis_hgetall_attempts", "attempts in a Redis hash keyed by position, HGETALL "
        "sorted as strings by the client", "puts attempt 10 before attempt 2 (11+ attempts)",
        R + "005", M + "GOLD-001")
class RedisHgetallAttempts(DocStorage):
    def on_read(self, doc: Obj) -> Obj:
        fields = {str(i): a for i, a in enumerate(doc["attempts"])}
        doc["attempts"] = [fields[k] for k in sorted(fields)]
        return doc


@mutant("redis_set_attempts", "attempts in a Redis SET (SMEMBERS: no order, no duplicates)",
        "returns attempts in hash order and collapses identical ones", R + "005")
class RedisSetAttempts(DocStorage):
    def on_read(self, doc: Obj) -> Obj:
        members = {dumps(a) for a in doc["attempts"]}
        order = sorted(members, key=lambda t: hashlib.md5(t.encode()).digest())  # hash order
        doc["attempts"] = [json.loads(t) for t in order]
        return doc


@mutant("redis_ltrim_attempts", "attempts in a Redis list kept short by LTRIM -1000 -1 "
        "(a capped history)", "keeps only the last 1,000 attempts", R + "005")
class RedisLtrimAttempts(DocStorage):
    def on_write(self, doc: Obj) -> Obj:
        doc["attempts"] = doc["attempts"][-1_000:]
        return doc


# -- storage semantics (C13, C14, C15, C2) -----------------------------------------------------


@mutant("upsert_merges_headers", "Redis HSET of the header hash without DEL first",
        "keeps header keys of the earlier version on rewrite", M + "ST-001")
class UpsertMergesHeaders(DocStorage):
    def store(self, table: dict[str, str], key: str, doc: Obj) -> None:
        old = json.loads(table[key]) if key in table else {"headers": {}}
        doc["headers"] = {**old["headers"], **doc["headers"]}
        super().store(table, key, doc)


@mutant("upsert_keeps_created_at", "PostgreSQL `ON CONFLICT (id) DO UPDATE SET` every "
        "column but created_at (the row's insert time, as an ORM's auto_now_add keeps it)",
        "a rewrite keeps the created_at of the version written first", M + "ST-001")
class UpsertKeepsCreatedAt(DocStorage):
    def store(self, table: dict[str, str], key: str, doc: Obj) -> None:
        if key in table:
            doc["created_at"] = json.loads(table[key])["created_at"]
        super().store(table, key, doc)


@mutant("upsert_merges_unknown", "PostgreSQL `extra = extra || EXCLUDED.extra` in ON CONFLICT",
        "keeps unknown top-level fields of the earlier version on rewrite", M + "ST-001")
class UpsertMergesUnknown(DocStorage):
    def store(self, table: dict[str, str], key: str, doc: Obj) -> None:
        if key in table:
            old = json.loads(table[key])
            doc = {**{k: v for k, v in old.items() if k not in ENVELOPE_FIELDS}, **doc}
        super().store(table, key, doc)


@mutant("attempt_rows_survive", "attempt rows upserted by position, never deleted",
        "keeps trailing attempts of the earlier version on rewrite", M + "ST-001")
class AttemptRowsSurvive(DocStorage):
    def store(self, table: dict[str, str], key: str, doc: Obj) -> None:
        if key in table:
            old = json.loads(table[key])["attempts"]
            doc["attempts"] = doc["attempts"] + old[len(doc["attempts"]):]
        super().store(table, key, doc)


@mutant("insert_on_conflict_do_nothing", "`INSERT … ON CONFLICT (ns, id) DO NOTHING` "
        "(PostgreSQL) / `INSERT IGNORE` (MySQL) / Redis SETNX as the write",
        "ignores rewrites: the first version of an id stays", M + "ST-001")
class InsertOnConflictDoNothing(DocStorage):
    def store(self, table: dict[str, str], key: str, doc: Obj) -> None:
        if key not in table:
            super().store(table, key, doc)


@mutant("namespace_ignored", "one shared table; the namespace column never used in queries",
        "shares data between namespaces; a drop, which has no namespace to delete by, "
        "deletes nothing", M + "ST-003", M + "ST-004", M + "ST-006")
class NamespaceIgnored(DocStorage):
    def table(self, namespace: str) -> dict[str, str]:
        return self.disk.setdefault("__shared__", {})

    def drop(self, namespace: str) -> None:
        pass


@mutant("drop_truncates_all", "drop implemented as TRUNCATE of the shared table / FLUSHDB",
        "dropping one namespace removes every namespace", M + "ST-004")
class DropTruncatesAll(DocStorage):
    def drop(self, namespace: str) -> None:
        self.disk.clear()


@mutant("drop_soft_delete", "soft delete (deleted_at set) that reads never filter",
        "drop removes nothing", M + "ST-004")
class DropSoftDelete(DocStorage):
    def drop(self, namespace: str) -> None:
        pass


@mutant("writes_lost_after_drop", "DROP TABLE, then writes through a cached prepared "
        "statement to the dropped table fail silently (fire-and-forget pipeline)",
        "loses every write to a namespace after it was dropped once", M + "ST-004", M + "ST-006")
class WritesLostAfterDrop(DocStorage):
    def drop(self, namespace: str) -> None:
        super().drop(namespace)
        self.disk.setdefault("__dropped__", {})[namespace] = "1"

    def write(self, namespace: str, env: Envelope) -> None:
        if namespace in self.disk.get("__dropped__", {}):
            return
        super().write(namespace, env)


@mutant("missing_id_raises", "Go sql.ErrNoRows / Java Optional.get() turned into an error",
        "reading an id that was never written raises INTERNAL", M + "ST-002")
class MissingIdRaises(DocStorage):
    def load(self, table: dict[str, str], key: str, id: str) -> Obj | None:
        if key not in table:
            raise StorageError(ErrorCode.INTERNAL, f"no rows for id {id}")
        return super().load(table, key, id)


@mutant("key_without_id", "a primary key on (namespace) only: the id column left out",
        "keeps only the last envelope written to a namespace", R + "002")
class KeyWithoutId(DocStorage):
    def key(self, id: str) -> str:
        return "__the_only_row__"

    def load(self, table: dict[str, str], key: str, id: str) -> Obj | None:
        doc = super().load(table, key, id)
        return doc if doc is not None and doc.get("id") == id else None


@mutant("durable_claimed_memory_only", "an in-memory backend that declares `durable`",
        "loses everything when the storage is reopened", R + "003")
class DurableClaimedMemoryOnly(DocStorage):
    durable_disk = False


@mutant("cache_hides_lossy_disk", "a write-through cache in front of a lossy column "
        "(DATETIME without fsp)", "reads hit an exact cache; after a reopen, the disk has "
        "lost the milliseconds", R + "003")
class CacheHidesLossyDisk(DocStorage):
    def __init__(self, entry_id: str) -> None:
        super().__init__(entry_id)
        self.cache: dict[tuple[str, str], str] = {}

    def write(self, namespace: str, env: Envelope) -> None:
        self.cache[(namespace, env.id)] = encode(env)
        doc = _ts_map(lambda d: d.replace(microsecond=0))(json.loads(encode(env)))
        self.store(self.table(namespace), env.id, doc)

    def read(self, namespace: str, id: str) -> Any:
        text = self.cache.get((namespace, id))
        return self.build(json.loads(text)) if text is not None else super().read(namespace, id)

    def drop(self, namespace: str) -> None:
        super().drop(namespace)
        for key in [k for k in self.cache if k[0] == namespace]:
            del self.cache[key]


@mutant("process_memory_claims_durable", "a store in a module-level dict (the process' "
        "memory, like SQLite's shared-cache :memory: kept open by a global connection) that "
        "declares `durable`", "keeps everything across a close and reopen in the process; a "
        "new process finds nothing", R + "003")
class ProcessMemoryClaimsDurable(DocStorage):
    durable_disk = False  # below: the process' memory instead of the zoo's disk
    MEMORY: ClassVar[dict[str, dict[str, dict[str, str]]]] = {}

    def __init__(self, entry_id: str) -> None:
        super().__init__(entry_id)
        self.disk = self.MEMORY.setdefault(entry_id, {})


@mutant("process_cache_hides_lossy_disk", "a process-wide cache (a module-level dict) in "
        "front of a lossy column (DATETIME without fsp)", "reads hit the exact cache, even "
        "through a reopened storage; a new process reads the disk, which lost the "
        "milliseconds", R + "003")
class ProcessCacheHidesLossyDisk(CacheHidesLossyDisk):
    CACHE: ClassVar[dict[tuple[str, str], str]] = {}

    def __init__(self, entry_id: str) -> None:
        super().__init__(entry_id)
        self.cache = self.CACHE  # outlives the storage object: a reopen still hits it


@mutant("mysql_text_64k", "MySQL TEXT column (65,535 bytes) holding the document",
        "refuses envelopes above 64 KiB with PAYLOAD_TOO_LARGE", M + "ST-005")
class MysqlText64k(DocStorage):
    def admit(self, env: Envelope) -> None:
        size = len(encode(env).encode("utf-8"))
        if size > 65_535:
            raise StorageError(ErrorCode.PAYLOAD_TOO_LARGE, f"{size} bytes > TEXT (65535)")


def _drop_extra_over(obj: Obj, known: frozenset[str], limit: int,
                     size: Callable[[Any], int]) -> None:
    """A column of ``limit`` holding ``obj``'s unknown fields as one JSON text: longer
    text is cut, the reader skips what no longer parses, and the fields are gone."""
    extra = {k: v for k, v in obj.items() if k not in known}
    if size(extra) > limit:
        for k in extra:
            del obj[k]


@mutant("detail_text_64k", "error.detail in a MySQL TEXT column of its own (65,535 bytes), "
        "strict sql_mode", "refuses envelopes whose error.detail is over 64 KiB (an "
        "envelope of 1 MiB may hold one)", M + "ST-005")
class DetailText64k(DocStorage):
    def admit(self, env: Envelope) -> None:
        for a in env.attempts:
            if a.error is not None and a.error.detail is not None:
                size = len(json.dumps(a.error.detail, ensure_ascii=False).encode("utf-8"))
                if size > 65_535:
                    raise StorageError(ErrorCode.INTERNAL,
                                       "Data too long for column 'detail' at row 1")


@mutant("attempt_extra_varchar_16383", "an attempts table whose `extra` JSON column is "
        "VARCHAR(16383) (MySQL utf8mb4 row limit), non-strict sql_mode: longer JSON is cut "
        "and the reader skips what no longer parses", "drops an attempt's unknown fields "
        "once their JSON is over 16,383 characters", R + "011", M + "ST-005", M + "UF-002")
class AttemptExtraVarchar16383(DocStorage):
    def on_write(self, doc: Obj) -> Obj:
        for attempt in doc["attempts"]:
            _drop_extra_over(attempt, ATTEMPT_FIELDS, 16_383, lambda v: len(dumps(v)))
        return doc


@mutant("header_value_text_64k", "header values in a MySQL TEXT column of their own "
        "(65,535 bytes), non-strict sql_mode", "cuts header values to 65,535 bytes",
        R + "011")
class HeaderValueText64k(DocStorage):
    def on_write(self, doc: Obj) -> Obj:
        doc["headers"] = {k: cut_utf8(v, 65_535) for k, v in doc["headers"].items()}
        return doc


@mutant("error_extra_text_64k", "a Go error struct with `Extra json.RawMessage` kept in a "
        "TEXT column (65,535 bytes), non-strict sql_mode", "drops an error's unknown fields "
        "once their JSON is over 64 KiB", M + "ST-005", M + "UF-003")
class ErrorExtraText64k(DocStorage):
    def on_write(self, doc: Obj) -> Obj:
        for attempt in doc["attempts"]:
            if isinstance(attempt.get("error"), dict):
                _drop_extra_over(attempt["error"], ERROR_FIELDS, 65_535,
                                 lambda v: len(dumps(v).encode("utf-8")))
        return doc


# -- namespace names (C14), eviction and aliasing (C13a) ------------------------------------


@mutant("drop_by_prefix", "Redis `SCAN MATCH ns*` without a separator after the name / "
        "`DELETE … WHERE ns LIKE 'ab%'`", "dropping a namespace also drops every namespace "
        "whose name it is a prefix of", M + "ST-008")
class DropByPrefix(DocStorage):
    def drop(self, namespace: str) -> None:
        for name in [n for n in self.disk if n.startswith(namespace)]:
            del self.disk[name]


@mutant("drop_like_underscore", "`DELETE … WHERE ns LIKE %s` with the name as the pattern: "
        "`_` left unescaped", "dropping `a_c` also drops `abc` (`_` matches any character)",
        M + "ST-008")
class DropLikeUnderscore(DocStorage):
    def drop(self, namespace: str) -> None:
        like = re.compile(namespace.replace("_", "."))
        for name in [n for n in self.disk if like.fullmatch(n)]:
            del self.disk[name]


@mutant("drop_first_1000", "a drop that deletes one batch and forgets to loop: `DELETE … "
        "WHERE ns = %s LIMIT 1000` run once, one Redis `SCAN … COUNT 1000` without its "
        "cursor", "dropping a namespace of more than 1,000 envelopes leaves the rest",
        M + "ST-004", profile="ci")
class DropFirst1000(DocStorage):
    def drop(self, namespace: str) -> None:
        table = self.disk.get(namespace)
        if table is None or len(table) <= 1_000:
            self.disk.pop(namespace, None)
            return
        for key in list(table)[:1_000]:
            del table[key]


@mutant("drop_one_page_1mib", "a drop that deletes what one DynamoDB Query page returned "
        "(at most 1 MiB of items) and never follows LastEvaluatedKey",
        "dropping a namespace holding more than 1 MiB leaves what was past the first page",
        M + "ST-004")
class DropOnePage1Mib(DocStorage):
    def drop(self, namespace: str) -> None:
        table = self.disk.get(namespace)
        if table is None:
            return
        page = 0
        for key in list(table):
            page += len(table[key].encode())
            if page > 1_048_576:
                return
            del table[key]
        self.disk.pop(namespace, None)


@mutant("read_like_underscore", "`SELECT … WHERE ns LIKE %s AND id = %s`: `_` left "
        "unescaped in reads", "namespace `a_c` reads what `abc` wrote under the same id",
        M + "ST-008")
class ReadLikeUnderscore(DocStorage):
    def load(self, table: dict[str, str], key: str, id: str) -> Obj | None:
        namespace = next(ns for ns, t in self.disk.items() if t is table)
        like = re.compile(namespace.replace("_", "."))
        for name in sorted(self.disk):  # the first matching row wins
            if like.fullmatch(name) and key in self.disk[name]:
                return super().load(self.disk[name], key, id)
        return None


@mutant("namespace_cut_32", "a VARCHAR(32) namespace column in MySQL non-strict mode / "
        "a 32-byte key field", "namespace names cut to 32 characters: names equal in their "
        "first 32 characters share their data", M + "ST-008")
class NamespaceCut32(DocStorage):
    def table(self, namespace: str) -> dict[str, str]:
        return super().table(namespace[:32])

    def drop(self, namespace: str) -> None:
        super().drop(namespace[:32])


@mutant("oracle_identifier_30", "a table per namespace named rdq_<ns> on Oracle before "
        "12.2 (identifiers of at most 30 bytes, ORA-00972)", "refuses namespace names longer "
        "than 26 characters", M + "ST-008")
class OracleIdentifier30(DocStorage):
    def open(self, namespace: str) -> DocAdapter:
        if len(f"rdq_{namespace}") > 30:
            raise StorageError(ErrorCode.INTERNAL,
                               f"ORA-00972: identifier is too long: rdq_{namespace}")
        return super().open(namespace)


@mutant("namespace_regex_min_2", "a hand-written name check `[a-z][a-z0-9_]{1,39}` (off by "
        "one)", "refuses one-character namespace names", M + "ST-008")
class NamespaceRegexMin2(DocStorage):
    def open(self, namespace: str) -> DocAdapter:
        if not re.fullmatch(r"[a-z][a-z0-9_]{1,39}", namespace):
            raise StorageError(ErrorCode.INVALID_ENVELOPE, f"bad namespace {namespace!r}")
        return super().open(namespace)


@mutant("capped_store_256", "a capped collection (MongoDB capped, Redis XADD MAXLEN 256) "
        "holding a namespace's envelopes", "keeps only the 256 envelopes written last in a "
        "namespace", M + "ST-009")
class CappedStore256(DocStorage):
    CAP = 256

    def store(self, table: dict[str, str], key: str, doc: Obj) -> None:
        table.pop(key, None)  # a rewrite counts as the newest
        super().store(table, key, doc)
        while len(table) > self.CAP:
            del table[next(iter(table))]


@mutant("lru_cache_over_lossy_store", "a bounded read cache (LRU of 64, e.g. Caffeine or "
        "functools.lru_cache) in front of a DATETIME column without fsp", "reads are exact "
        "while the envelope is cached; after 64 other writes, the store's copy has lost the "
        "milliseconds", M + "ST-009")
class LruCacheOverLossyStore(DocStorage):
    capabilities = frozenset()  # not durable: C15 would see the loss without any eviction
    durable_disk = False
    SIZE = 64

    def __init__(self, entry_id: str) -> None:
        super().__init__(entry_id)
        self.cache: OrderedDict[tuple[str, str], str] = OrderedDict()

    def write(self, namespace: str, env: Envelope) -> None:
        self.cache[(namespace, env.id)] = encode(env)
        self.cache.move_to_end((namespace, env.id))
        while len(self.cache) > self.SIZE:
            self.cache.popitem(last=False)
        doc = _ts_map(lambda d: d.replace(microsecond=0))(json.loads(encode(env)))
        self.store(self.table(namespace), env.id, doc)

    def read(self, namespace: str, id: str) -> Any:
        text = self.cache.get((namespace, id))
        if text is None:
            return super().read(namespace, id)
        self.cache.move_to_end((namespace, id))
        return self.build(json.loads(text))

    def drop(self, namespace: str) -> None:
        super().drop(namespace)
        for key in [k for k in self.cache if k[0] == namespace]:
            del self.cache[key]


@mutant("lru_cache_1024_over_lossy_store", "a read cache of the common size (Caffeine "
        "maximumSize(1024), an LRU of 1,024) in front of a DATETIME column without fsp",
        "reads are exact while the envelope is among the last 1,024 used; older ones come "
        "from the store without their milliseconds", M + "ST-009", profile="ci")
class LruCache1024OverLossyStore(LruCacheOverLossyStore):
    SIZE = 1_024


class _SessionAdapter(DocAdapter):
    """An adapter with a session of its own that keeps every envelope it saved or loaded
    (stored text, so that C13a holds): a read answers from it when it can."""

    def __init__(self, storage: DocStorage, namespace: str) -> None:
        super().__init__(storage, namespace)
        self.seen: dict[str, str | None] = {}

    def write(self, envelope: Envelope) -> Any:
        result = super().write(envelope)
        key = self.storage.key(envelope.id)
        self.seen[key] = self.storage.table(self.namespace).get(key)
        return result

    def read(self, id: str) -> Any:
        key = self.storage.key(id)
        if key not in self.seen:
            self.seen[key] = self.storage.table(self.namespace).get(key)
        text = self.seen[key]
        return None if text is None else self.storage.from_text(text, id)


@mutant("orm_session_identity_map", "an adapter holding one long-lived ORM session "
        "(Hibernate's first-level cache, SQLAlchemy's identity map with expire_on_commit="
        "False)", "answers every read of an id this adapter saved or loaded from its "
        "session, so another adapter's rewrite of it is never seen", M + "ST-001")
class OrmSessionIdentityMap(DocStorage):
    def open(self, namespace: str) -> DocAdapter:
        return _SessionAdapter(self, namespace)


class _SnapshotAdapter(DocAdapter):
    """An adapter whose connection begins a transaction with its first read and ends it
    only when it writes (PyMySQL's autocommit off, a commit after each write only):
    InnoDB's REPEATABLE READ shows every read in it the snapshot the first one took."""

    def __init__(self, storage: DocStorage, namespace: str) -> None:
        super().__init__(storage, namespace)
        self.snapshot: dict[str, str] | None = None

    def write(self, envelope: Envelope) -> Any:
        self.snapshot = None  # the write's COMMIT ends the transaction
        return super().write(envelope)

    def read(self, id: str) -> Any:
        if self.snapshot is None:
            self.snapshot = dict(self.storage.table(self.namespace))
        text = self.snapshot.get(self.storage.key(id))
        return None if text is None else self.storage.from_text(text, id)


@mutant("repeatable_read_snapshot", "PyMySQL with autocommit off, committing after writes "
        "only: a reading connection stays in the transaction its first read began "
        "(InnoDB REPEATABLE READ)", "an adapter's reads return the snapshot its first read "
        "took, until it writes: another adapter's writes since are not seen", M + "ST-001")
class RepeatableReadSnapshot(DocStorage):
    def open(self, namespace: str) -> DocAdapter:
        return _SnapshotAdapter(self, namespace)


@mutant("keeps_caller_object", "an in-memory store (a test fake, a Java map of mutable "
        "objects) keeping the envelope object it was given", "the caller's later changes to "
        "its object (headers, unknown fields, detail) show in what is read", M + "ST-010")
class KeepsCallerObject(DocStorage):
    capabilities = frozenset()

    def __init__(self, entry_id: str) -> None:
        super().__init__(entry_id)
        self.objects: dict[str, dict[str, Envelope]] = {}

    def write(self, namespace: str, env: Envelope) -> None:
        self.objects.setdefault(namespace, {})[env.id] = env

    def read(self, namespace: str, id: str) -> Any:
        return self.objects.get(namespace, {}).get(id)

    def drop(self, namespace: str) -> None:
        self.objects.pop(namespace, None)


@mutant("shallow_copy_on_write", "an in-memory store copying the envelope one level deep "
        "(`dict(env.extra)`, Java `new HashMap<>(headers)`)", "nested unknown-field values "
        "and `detail` stay shared with the caller's object", M + "ST-010")
class ShallowCopyOnWrite(KeepsCallerObject):
    def write(self, namespace: str, env: Envelope) -> None:
        shallow = replace(env, headers=dict(env.headers), extra=dict(env.extra))
        super().write(namespace, shallow)


# -- versions (C16) -------------------------------------------------------------------------


@mutant("version_stamped_on_read", "envelope_version not stored; the reader stamps its own "
        "compiled-in current version (2)", "reads every envelope back as version 2",
        M + "VER-001")
class VersionStampedOnRead(DocStorage):
    def on_read(self, doc: Obj) -> Obj:
        doc["envelope_version"] = 2
        return doc


@mutant("version_column_default_1", "envelope_version column with DEFAULT 1, never written",
        "stores an envelope of another version as version 1", M + "VER-002")
class VersionColumnDefault1(DocStorage):
    def on_write(self, doc: Obj) -> Obj:
        doc["envelope_version"] = 1
        return doc


@mutant("delete_then_insert_autocommit", "a write as DELETE of the id, then INSERT, in "
        "autocommit (no transaction); the INSERT's CHECK on envelope_version fails for an "
        "undeclared version", "a refused rewrite (UNSUPPORTED_ENVELOPE_VERSION) has already "
        "deleted the earlier version", M + "VER-002")
class DeleteThenInsertAutocommit(DocStorage):
    def write(self, namespace: str, env: Envelope) -> None:
        self.table(namespace).pop(self.key(env.id), None)  # the DELETE, committed
        if env.envelope_version not in self.versions:
            raise StorageError(ErrorCode.UNSUPPORTED_ENVELOPE_VERSION,
                               f"envelope_version {env.envelope_version} is not supported")
        super().write(namespace, env)


def _compact_size(env: Envelope) -> int:
    return len(encode(env).encode("utf-8"))


@mutant("drop_soft_delete_undone_by_write", "a soft delete: drop sets the namespace row's "
        "`deleted` flag and reads skip a deleted namespace; a write upserts the namespace row "
        "(INSERT … ON CONFLICT DO UPDATE SET deleted = false)", "the first write after a drop "
        "brings back every envelope dropped from the namespace", M + "ST-004")
class DropSoftDeleteUndoneByWrite(DocStorage):
    def __init__(self, entry_id: str) -> None:
        super().__init__(entry_id)
        self.deleted: set[str] = set()

    def drop(self, namespace: str) -> None:
        self.deleted.add(namespace)

    def write(self, namespace: str, env: Envelope) -> None:
        self.deleted.discard(namespace)
        super().write(namespace, env)

    def read(self, namespace: str, id: str) -> Any:
        return None if namespace in self.deleted else super().read(namespace, id)


@mutant("delete_then_insert_packet_limit", "a write as DELETE of the id, then INSERT, in "
        "autocommit, on a MySQL server whose max_allowed_packet is 1 MiB (MySQL 5.5's "
        "default); the too-large INSERT answered PAYLOAD_TOO_LARGE", "a refused rewrite past "
        "1 MiB has already deleted the earlier version", M + "ST-005")
class DeleteThenInsertPacketLimit(DocStorage):
    def write(self, namespace: str, env: Envelope) -> None:
        self.table(namespace).pop(self.key(env.id), None)  # the DELETE, committed
        if _compact_size(env) > MAX_ENVELOPE_BYTES:
            raise StorageError(ErrorCode.PAYLOAD_TOO_LARGE, "Got a packet bigger than "
                               "'max_allowed_packet' bytes")
        super().write(namespace, env)


@mutant("wrong_code_for_version", "version check reusing the generic validation error",
        "rejects undeclared versions with INVALID_ENVELOPE", M + "VER-002")
class WrongCodeForVersion(DocStorage):
    def admit(self, env: Envelope) -> None:
        if env.envelope_version not in self.versions:
            raise StorageError(ErrorCode.INVALID_ENVELOPE, "unknown envelope_version")


@mutant("declared_v2_read_as_v1", "a plugin that declares {1, 2} but parses every stored "
        "document with its v1 model, which stamps its own version", "declares envelope "
        "versions {1, 2}; reads a version-2 envelope back as version 1", M + "VER-001")
class DeclaredV2ReadAsV1(DocStorage):
    versions = frozenset({1, 2})

    def on_read(self, doc: Obj) -> Obj:
        if doc.get("envelope_version") == 2:
            doc["envelope_version"] = 1
        return doc


# -- truncation (C1) --------------------------------------------------------------------------


def _map_error_text(doc: Obj, name: str, fn: Callable[[str], str]) -> Obj:
    for obj, known in walk_docs(doc):
        if known is ERROR_FIELDS and isinstance(obj.get(name), str):
            obj[name] = fn(obj[name])
    return doc


@mutant("varchar_4095", "message column VARCHAR(4095): an off-by-one limit",
        "re-truncates 4,096-byte messages to 4,095 bytes", T + "001")
class Varchar4095(DocStorage):
    def on_write(self, doc: Obj) -> Obj:
        return _map_error_text(doc, "message", lambda s: cut_utf8(s, 4095, TRUNCATION_MARKER))


@mutant("stack_column_65535", "stack in a MySQL TEXT column (65,535 bytes)",
        "re-truncates 65,536-byte stacks to 65,535 bytes", T + "001")
class StackColumn65535(DocStorage):
    def on_write(self, doc: Obj) -> Obj:
        return _map_error_text(doc, "stack", lambda s: cut_utf8(s, 65_535, TRUNCATION_MARKER))


@mutant("mysql_nonstrict_varchar_4000", "MySQL non-strict sql_mode, VARCHAR(4000) message",
        "silently cuts messages to 4,000 characters, no marker", T + "001")
class MysqlNonstrictVarchar4000(DocStorage):
    def on_write(self, doc: Obj) -> Obj:
        return _map_error_text(doc, "message", lambda s: s[:4000])


def _cesu8_len(s: str) -> int:
    return len(s.encode("utf-8")) + 2 * sum(1 for c in s if ord(c) > 0xFFFF)


@mutant("oracle_cesu8_retruncate", "Oracle UTF8 (CESU-8) / Java modified UTF-8: astral "
        "characters count 6 bytes", "re-truncates values whose CESU-8 length exceeds the "
        "limit", T + "001", T + "002")
class OracleCesu8Retruncate(DocStorage):
    def on_write(self, doc: Obj) -> Obj:
        def fit(limit: int) -> Callable[[str], str]:
            def cut(s: str) -> str:
                if _cesu8_len(s) <= limit:
                    return s
                # the longest prefix that fits beside the marker (the length is a sum over
                # the characters: one pass, not a character dropped and all counted again)
                room, used = limit - _cesu8_len(TRUNCATION_MARKER), 0
                for i, c in enumerate(s):
                    used += _cesu8_len(c)
                    if used > room:
                        return s[:i] + TRUNCATION_MARKER
                return s + TRUNCATION_MARKER  # pragma: no cover - s does not fit

            return cut

        _map_error_text(doc, "message", fit(4096))
        return _map_error_text(doc, "stack", fit(65_536))


@mutant("truncated_flag_strips_marker", "a `truncated` flag column: the marker is stripped "
        "and re-added only to values that fill the column",
        "drops the marker from short values that end with it", T + "003")
class TruncatedFlagStripsMarker(DocStorage):
    def on_write(self, doc: Obj) -> Obj:
        def strip(limit: int) -> Callable[[str], str]:
            def fn(s: str) -> str:
                if s.endswith(TRUNCATION_MARKER) and len(s.encode("utf-8")) < limit - 3:
                    return s[: -len(TRUNCATION_MARKER)]
                return s

            return fn

        _map_error_text(doc, "message", strip(4096))
        return _map_error_text(doc, "stack", strip(65_536))


# =========================================================================================
# Mutants: testees behind the stdio bridge
# =========================================================================================

for _id, _system, _defect, _catches in (
    ("ts_offset", "java.time OffsetDateTime.toString() / Jackson JavaTimeModule",
     "timestamps written with +00:00 instead of Z", (R + "004",)),
    ("ts_micro", "Go time.RFC3339Nano, Python datetime.isoformat()",
     "timestamps with six fraction digits", (R + "004",)),
    ("ts_epoch_ms", "Jackson WRITE_DATES_AS_TIMESTAMPS (the default!)",
     "timestamps as epoch-millisecond numbers", (R + "004",)),
    ("id_lower", "ULID libraries that print lower case", "ids sent back in lower case",
     (R + "004",)),
    ("b64_nopad", "Go base64.RawStdEncoding", "payload base64 without '=' padding",
     (R + "004",)),
    ("b64_url", "Go base64.URLEncoding, Java Base64.getUrlEncoder()",
     "payload in URL-safe base64 ('-' and '_')", (R + "004",)),
    ("dup_keys", "a hand-rolled JSON writer merging known and residual fields",
     "an envelope object holding the same key twice", (R + "004",)),
    ("numbers_as_strings", "Jackson WRITE_NUMBERS_AS_STRINGS",
     "every number sent back as a string", (R + "004",)),
    ("omit_zero", "Go `json:\",omitempty\"` on integer fields",
     "attempt_count/redrive_count = 0 left out", (R + "004",)),
    ("handler_version_omitempty", "Go `json:\",omitempty\"` on a string field",
     'handler_version "" left out, so it reads as null', (R + "010",)),
    ("js_int64", "a Node.js testee: JSON.parse/JSON.stringify",
     "integers beyond 2^53 lose precision", (M + "UF-005",)),
    ("drop_unknown", "a typed struct without a residual map (Go, Rust serde default)",
     "unknown top-level fields dropped", (M + "UF-001",)),
    ("trim_space", "Go strings.TrimSpace in the DAO", "error message and stack trimmed",
     (R + "006",)),
    ("not_durable", "an in-memory testee that claims durable",
     "loses everything when the testee restarts", (R + "003",)),
    ("wrong_version_code", "version check reusing the validation error code",
     "undeclared envelope versions rejected with INVALID_ENVELOPE", (M + "VER-002",)),
    ("drop_prefix", "a file store dropping with a shell glob: rm -rf \"$STATE/$ns\"*",
     "dropping a namespace also drops every namespace whose name it is a prefix of",
     (M + "ST-008",)),
):
    testee(f"t_{_id}", Kind.MUTANT, _system, _defect, ("--defect", _id), _catches,
           cli=_id == "ts_offset")

# =========================================================================================
# Correct variants: the spec allows each difference; the kit must say compliant
# =========================================================================================


def correct(id: str, system: str, defect: str, **kw: Any) -> Any:
    return adapter(id, Kind.CORRECT, system, defect, **kw)


@correct("ok_base", "the base JSON-document adapter", "nothing: canonical JSON text per id")
class OkBase(DocStorage):
    pass


def _jsonb_order(v: Any) -> Any:
    if isinstance(v, dict):
        return {k: _jsonb_order(v[k]) for k in sorted(v, key=lambda k: (len(k.encode()), k))}
    if isinstance(v, list):
        return [_jsonb_order(x) for x in v]
    return v


@correct("ok_jsonb_key_order", "PostgreSQL jsonb (keys shorter-first, then bytewise)",
         "every object's keys come back in jsonb order (C11: order carries no meaning)")
class OkJsonbKeyOrder(DocStorage):
    def on_write(self, doc: Obj) -> Obj:
        return _jsonb_order(doc)  # type: ignore[no-any-return]


@correct("ok_absent_optional", "a store that leaves null columns out of the document",
         "optional known fields that are null are absent; the reader takes them as null (C9)")
class OkAbsentOptional(DocStorage):
    def on_write(self, doc: Obj) -> Obj:
        optional = {"handler_version", "next_attempt_at", "lease_expires_at", "finished_at",
                    "error", "detail", "stack"}
        for obj, known in walk_docs(doc):
            for k in [k for k in obj if k in known and k in optional and obj[k] is None]:
                del obj[k]
        return doc


@correct("ok_integral_float_as_int", "Jackson/JavaScript number output",
         "integral doubles below 1e21 come back as integers (C5: 1.0 as 1)")
class OkIntegralFloatAsInt(DocStorage):
    def on_write(self, doc: Obj) -> Obj:
        return map_json_numbers(
            doc, lambda n: int(n) if isinstance(n, float) and n.is_integer() and abs(n) < 1e21
            else n
        )


@correct("ok_not_durable", "an in-memory store", "keeps nothing across a reopen and does "
         "not claim durable")
class OkNotDurable(DocStorage):
    durable_disk = False
    capabilities = frozenset()


@correct("ok_extra_capability", "a plugin from a newer SDK",
         "declares capabilities the kit does not know (transactions, ttl)")
class OkExtraCapability(DocStorage):
    capabilities = frozenset({"durable", "transactions", "ttl"})


@correct("ok_rejects_other_versions", "a strict v1-only plugin",
         "rejects undeclared versions with UNSUPPORTED_ENVELOPE_VERSION (C16)")
class OkRejectsOtherVersions(DocStorage):
    def admit(self, env: Envelope) -> None:
        if env.envelope_version not in self.versions:
            raise StorageError(ErrorCode.UNSUPPORTED_ENVELOPE_VERSION,
                               f"envelope_version={env.envelope_version} is not supported")


@correct("ok_refuses_past_limit", "a store that refuses envelopes past C2's 1 MiB",
         "answers PAYLOAD_TOO_LARGE to a write past 1 MiB and stores nothing (C17)")
class OkRefusesPastLimit(DocStorage):
    def admit(self, env: Envelope) -> None:
        if _compact_size(env) > MAX_ENVELOPE_BYTES:
            raise StorageError(ErrorCode.PAYLOAD_TOO_LARGE, "past 1 MiB")


@correct("ok_declares_v1_v2", "a plugin that stores versions 1 and 2 as they come",
         "declares envelope versions {1, 2} and stores both exactly (C16); its "
         "undeclared-version cases of version 2 do not apply")
class OkDeclaresV1V2(DocStorage):
    versions = frozenset({1, 2})

    def admit(self, env: Envelope) -> None:
        if env.envelope_version not in self.versions:
            raise StorageError(ErrorCode.UNSUPPORTED_ENVELOPE_VERSION,
                               f"envelope_version={env.envelope_version} is not supported")


for _id, _defect in (
    ("good", "nothing: stores the JSON it was sent, durably in RDQ_STATE_DIR"),
    ("shuffled_keys", "object keys in random order (C11)"),
    ("escapes", "every non-ASCII character and '/' escaped: \\u00e9, \\ud83d\\ude00, \\/"),
    ("absent_optional", "null optional known fields left out (C9)"),
    ("js_numbers", "integral doubles below 1e21 written as integers (C5)"),
    ("memory", "in memory, no durable capability"),
    ("extra_capability", "claims capabilities the kit does not know"),
    ("chatty_stderr", "~8 KiB of log on stderr per request"),
    ("slow", "1 s to start, some answers after 200 ms (within the timeout)"),
):
    testee(f"tok_{_id}", Kind.CORRECT, "testee.py (any-language plugin)", _defect,
           ("--variant", _id), cli=_id == "good")


# =========================================================================================
# Faults: broken plugins; the run ends in bounded time with the fault named
# =========================================================================================


def fault(id: str, defect: str, *fault_text: str, **kw: Any) -> Any:
    return adapter(id, Kind.FAULT, "a broken Python plugin", defect, fault_text=fault_text,
                   **kw)


@fault("fault_raises", "every write raises RuntimeError('connection reset by peer')",
       "RuntimeError", "connection reset by peer")
class FaultRaises(DocStorage):
    def write(self, namespace: str, env: Envelope) -> None:
        raise RuntimeError("connection reset by peer")


@fault("fault_system_exit", "read calls sys.exit(3) (a library's fatal-error path)",
       "SystemExit")
class FaultSystemExit(DocStorage):
    def read(self, namespace: str, id: str) -> Any:
        raise SystemExit(3)


@fault("fault_read_returns_dict", "read returns the stored JSON object, not an Envelope",
       "dict")
class FaultReadReturnsDict(DocStorage):
    def on_model(self, env: Envelope) -> Any:
        return json.loads(encode(env))


@fault("fault_write_returns_value", "write returns True instead of None", "True", "bool")
class FaultWriteReturnsValue(DocStorage):
    def write(self, namespace: str, env: Envelope) -> Any:
        super().write(namespace, env)
        return True


@fault("fault_mutates_input", "write stores the envelope, then adds a header to the "
       "caller's object", "mutat", "changed the envelope")
class FaultMutatesInput(DocStorage):
    def write(self, namespace: str, env: Envelope) -> None:
        super().write(namespace, env)
        headers = env.headers
        if isinstance(headers, dict):
            headers["x-touched-by-plugin"] = "yes"
        else:
            object.__setattr__(env, "headers", {**headers, "x-touched-by-plugin": "yes"})


@fault("fault_bad_error_code", "reports a missing id as StorageError('NOT_FOUND')",
       "NOT_FOUND")
class FaultBadErrorCode(DocStorage):
    def load(self, table: dict[str, str], key: str, id: str) -> Obj | None:
        if key not in table:
            raise StorageError("NOT_FOUND", f"no envelope {id}")
        return super().load(table, key, id)


_HANG_ONCE: set[str] = set()


@fault("fault_hang_once", "the 5th read blocks forever (a lost lock)", "timeout", "0.5",
       "hung", "did not")
class FaultHangOnce(DocStorage):
    reads = 0

    def read(self, namespace: str, id: str) -> Any:
        type(self).reads += 1
        if type(self).reads == 5 and self.entry_id not in _HANG_ONCE:
            _HANG_ONCE.add(self.entry_id)
            threading.Event().wait()
        return super().read(namespace, id)


@fault("fault_hang_every_read", "every read blocks forever (a reader deadlocked on a lock)",
       "hung 3 times in this run, in read")
class FaultHangEveryRead(DocStorage):
    def read(self, namespace: str, id: str) -> Any:
        threading.Event().wait()


@fault("fault_info_wrong_type", "info is a dict, not a StorageInfo", "StorageInfo", "info")
class FaultInfoWrongType(DocStorage):
    @property
    def info(self) -> Any:
        return {"name": "zoo", "version": "1"}


for _id, _defect, _texts, _timeout in (
    ("crash", "exits with status 3 in the middle of the 5th write", ("exit status 3", "crash"),
     10.0),
    ("hang", "stops answering at the 5th read", ("did not answer", "0.5"), 0.5),
    ("hang_every_read", "never answers a read", ("hung 3 times in this run, in read",), 0.5),
    ("hang_after_warmup", "each process answers 6 requests, then never answers a read "
     "(a leaking connection pool)", ("hung 3 times in this run, in read",), 0.5),
    ("garbage", "prints 'hello world' instead of the 5th read's response",
     ("hello world",), 10.0),
    ("wrong_seq", "answers the 5th read with seq + 1", ("seq",), 10.0),
    ("extra_line", "answers the 5th write twice", ("seq", "extra", "out of turn", "unexpected"),
     10.0),
    ("invalid_json", "answers the 5th read with a line that is not JSON", ("json",), 10.0),
    ("bad_code", "reports a missing id with error code NOT_FOUND", ("NOT_FOUND",), 10.0),
):
    _entry = Entry(f"tfault_{_id}", Kind.FAULT, Via.TESTEE, "a broken testee", _defect,
                   fault_text=_texts, testee_args=("--defect", _id), bridge_timeout=_timeout,
                   cli=_id == "crash")
    _add(_entry, TesteePlugin(_entry))

del _id, _system, _defect, _catches, _texts, _timeout, _entry


# =========================================================================================
# Concurrency (C18): plugins that declare `concurrent`
# =========================================================================================
# Each store operation of these adapters sleeps for one simulated round trip to a database
# server: real I/O releases the GIL there, which is where other threads get in.

_RTT = 0.0003


def _round_trip() -> None:
    time.sleep(_RTT)


class ConcurrentDoc(DocStorage):
    """The base document store, declaring `concurrent` (a dict assignment is atomic)."""

    capabilities = frozenset({"durable", "concurrent"})


@mutant("torn_two_statement_write", "a decomposed store: the task row and its attempt rows "
        "written (and read) by two statements without a transaction",
        "a read overlapping a rewrite sees the new task with the old attempts",
        M + "CC-001")
class TornTwoStatementWrite(ConcurrentDoc):
    def store(self, table: dict[str, str], key: str, doc: Obj) -> None:
        attempts = doc.pop("attempts")
        table[key] = dumps(doc)  # UPDATE task ...
        _round_trip()
        table[key + "#attempts"] = dumps(attempts)  # DELETE/INSERT attempt rows ...

    def load(self, table: dict[str, str], key: str, id: str) -> Obj | None:
        text = table.get(key)  # SELECT task ...
        _round_trip()
        rows = table.get(key + "#attempts")  # SELECT attempts ...
        if text is None or rows is None:
            return None
        doc: Obj = json.loads(text)
        doc["attempts"] = json.loads(rows)
        return doc


@correct("ok_two_statements_in_transaction", "the same decomposed store, both statements in "
         "one transaction (here: a lock per namespace held across them)",
         "two statements per write and per read, isolated from each other (C18)")
class OkTwoStatementsInTransaction(TornTwoStatementWrite):
    capabilities = frozenset({"durable", "concurrent"})
    _locks: ClassVar[dict[str, threading.Lock]] = {}
    _guard = threading.Lock()

    def lock(self, namespace: str) -> threading.Lock:
        with self._guard:
            return self._locks.setdefault(f"{self.entry_id}/{namespace}", threading.Lock())

    def write(self, namespace: str, env: Envelope) -> None:
        with self.lock(namespace):
            super().write(namespace, env)

    def read(self, namespace: str, id: str) -> Any:
        with self.lock(namespace):
            return super().read(namespace, id)


@mutant("rmw_shared_document", "the namespace kept as one JSON document (a Redis string, one "
        "row's JSON column, a file) updated by GET, modify, SET",
        "of two concurrent writes of different ids, the later SET drops the other",
        M + "CC-002", M + "CC-003")
class RmwSharedDocument(ConcurrentDoc):
    def write(self, namespace: str, env: Envelope) -> None:
        self.admit(env)
        table = self.table(namespace)
        whole: dict[str, str] = json.loads(table.get("*", "{}"))  # GET
        _round_trip()
        whole[env.id] = dumps(self.on_write(to_json(env)))
        table["*"] = dumps(whole)  # SET

    def read(self, namespace: str, id: str) -> Any:
        text = json.loads(self.table(namespace).get("*", "{}")).get(id)
        return None if text is None else self.build(json.loads(text))


@mutant("racy_read_cache", "a cache-aside read cache (memcached/Redis in front of a "
        "database) filled after the load and emptied by writes, without versions",
        "a read that loaded the old value fills the cache after a write emptied it: stale "
        "reads until the next write", M + "CC-003")
class RacyReadCache(ConcurrentDoc):
    def __init__(self, entry_id: str) -> None:
        super().__init__(entry_id)
        self.cache: dict[tuple[str, str], str] = {}

    def read(self, namespace: str, id: str) -> Any:
        text = self.cache.get((namespace, id))
        if text is None:
            text = self.table(namespace).get(id)  # SELECT ...
            _round_trip()  # ... its answer comes back
            if text is None:
                return None
            _round_trip()  # SET cache ... travels to the cache server
            self.cache[(namespace, id)] = text
        return self.build(json.loads(text))

    def write(self, namespace: str, env: Envelope) -> None:
        super().write(namespace, env)  # UPDATE ...
        _round_trip()
        self.cache.pop((namespace, env.id), None)  # DEL cache

    def drop(self, namespace: str) -> None:
        super().drop(namespace)
        self.cache = {k: v for k, v in self.cache.items() if k[0] != namespace}


@mutant("shared_search_path", "one connection shared by every adapter, the namespace chosen "
        "per statement with SET search_path (PostgreSQL) or USE (MySQL)",
        "a concurrent adapter switches the connection's namespace between SET and the "
        "statement: writes land in another namespace", M + "CC-004")
class SharedSearchPath(ConcurrentDoc):
    current = ""

    def write(self, namespace: str, env: Envelope) -> None:
        self.current = namespace  # SET search_path TO namespace
        _round_trip()
        super().write(self.current, env)

    def read(self, namespace: str, id: str) -> Any:
        self.current = namespace
        _round_trip()
        return super().read(self.current, id)


@correct("ok_concurrent_slow", "a remote database under load",
         "every operation takes 2 ms; calls overlap freely (C18)")
class OkConcurrentSlow(ConcurrentDoc):
    def write(self, namespace: str, env: Envelope) -> None:
        time.sleep(0.002)
        super().write(namespace, env)
        time.sleep(0.002)

    def read(self, namespace: str, id: str) -> Any:
        time.sleep(0.002)
        return super().read(namespace, id)


@correct("ok_concurrent_one_lock", "one database connection guarded by a mutex",
         "every call serialised behind one lock, round trips included (C18)")
class OkConcurrentOneLock(RacyReadCache):
    # The racy cache made correct the blunt way: nothing overlaps any more.
    _lock = threading.Lock()

    def read(self, namespace: str, id: str) -> Any:
        with self._lock:
            return super().read(namespace, id)

    def write(self, namespace: str, env: Envelope) -> None:
        with self._lock:
            super().write(namespace, env)

    def drop(self, namespace: str) -> None:
        with self._lock:
            super().drop(namespace)


testee("t_mixed_seq", Kind.MUTANT, "a testee keeping the current request's id in one variable "
       "shared by its handler threads", "answers pipelined requests with the seq of the "
       "latest request received", ("--defect", "mixed_seq"), (M + "CC-001",),
       # an answer filed under another request: any concurrency check may read it
       also=(M + "CC-002", M + "CC-003", M + "CC-004", M + "CC-005"))
testee("tok_concurrent", Kind.CORRECT, "testee.py (any-language plugin)",
       "claims concurrent: handles pipelined requests on threads, answers in any order (C18)",
       ("--variant", "concurrent"))


@mutant("drop_rewrites_store", "one store file for every namespace (a JSON or pickle file, "
        "shelve): drop writes back a copy of the other namespaces taken before, without a "
        "lock", "a write to another namespace made while a drop runs is lost",
        M + "CC-004", also=(M + "CC-005",))  # CC-005's own check: the other namespace
class DropRewritesStore(ConcurrentDoc):
    def drop(self, namespace: str) -> None:
        kept = {ns: dict(t) for ns, t in self.disk.items() if ns != namespace}  # load file
        _round_trip()
        self.disk.clear()  # write the file back
        self.disk.update(kept)


@mutant("racy_side_index", "Redis SMEMBERS-less index: the ids of a namespace kept as one "
        "JSON list under an index key, updated by GET, append, SET (no SADD, no "
        "WATCH/MULTI); drop deletes the listed keys",
        "concurrent writes lose ids from the index; a drop by the index leaves their "
        "envelopes behind", M + "CC-005")
class RacySideIndex(ConcurrentDoc):
    INDEX = "#index"  # no id has a '#': the index never shadows an envelope

    def write(self, namespace: str, env: Envelope) -> None:
        super().write(namespace, env)  # SET rdq:<ns>:<id>
        table = self.table(namespace)
        ids: list[str] = json.loads(table.get(self.INDEX, "[]"))  # GET rdq:<ns>:index
        _round_trip()
        if env.id not in ids:
            ids.append(env.id)
        table[self.INDEX] = json.dumps(ids)  # SET rdq:<ns>:index

    def drop(self, namespace: str) -> None:
        table = self.disk.get(namespace, {})
        for id in json.loads(table.pop(self.INDEX, "[]")):  # DEL each indexed key
            table.pop(self.key(id), None)


# -- outages (C20) ----------------------------------------------------------------------


@mutant("unavailable_for_astral", "a driver that maps every error it does not know to "
        "'connection lost' (here: MySQL utf8mb3 refusing astral characters)",
        "answers UNAVAILABLE (C20) to envelopes holding astral-plane characters, while "
        "it answers every other call", R + "006")
class UnavailableForAstral(DocStorage):
    def on_write(self, doc: Obj) -> Obj:
        if any(ord(c) > 0xFFFF for c in json.dumps(doc, ensure_ascii=False)):
            raise StorageError(ErrorCode.UNAVAILABLE, "Lost connection to server during query")
        return doc


# -- column lengths (issue 22 §6; the same limits on the real servers: server_zoo.py) ----


@mutant("varchar255_header_value_strict", "MySQL/MariaDB strict mode, header values in a "
        "VARCHAR(255) column: 'Data too long for column' (error 1406)",
        "refuses an envelope with a header value over 255 characters (INTERNAL)", R + "011")
class Varchar255HeaderValueStrict(DocStorage):
    def admit(self, env: Envelope) -> None:
        for key, value in env.headers.items():
            if len(value) > 255:
                raise StorageError(ErrorCode.INTERNAL, "(1406, \"Data too long for column 'v' "
                                   f"at row 1\") (header {key[:20]!r})")


@mutant("varchar255_error_type_truncated", "MySQL/MariaDB without strict mode (sql_mode ''), "
        "error.type in a VARCHAR(255) column: a warning, the value cut to 255 characters",
        "keeps the first 255 characters of error.type", R + "011")
class Varchar255ErrorTypeTruncated(DocStorage):
    def on_write(self, doc: Obj) -> Obj:
        for attempt in doc["attempts"]:
            if attempt.get("error"):
                attempt["error"]["type"] = attempt["error"]["type"][:255]
        return doc


@mutant("queue_varchar_191", "MySQL/MariaDB without strict mode, queue and handler_ref in "
        "VARCHAR(191) columns: the longest a utf8mb4 index holds (767 bytes)",
        "keeps the first 191 characters of queue and handler_ref", R + "011")
class QueueVarchar191(DocStorage):
    def on_write(self, doc: Obj) -> Obj:
        return {**doc, "queue": doc["queue"][:191], "handler_ref": doc["handler_ref"][:191]}


@mutant("queue_varchar_191_strict", "MySQL/MariaDB strict mode, queue in a VARCHAR(191) "
        "column: 'Data too long for column' (error 1406)",
        "refuses an envelope whose queue is over 191 characters (INTERNAL)", R + "011")
class QueueVarchar191Strict(DocStorage):
    def admit(self, env: Envelope) -> None:
        if len(env.queue) > 191:
            raise StorageError(ErrorCode.INTERNAL,
                               "(1406, \"Data too long for column 'queue' at row 1\")")
