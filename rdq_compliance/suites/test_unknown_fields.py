"""Unknown fields (C10) and exact numbers (C5) at every level of the envelope."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import strategies as st

from rdq_compliance import Envelope, Outcome
from rdq_compliance.strategies import ids, json_values, unknown_field_maps
from rdq_compliance.suites._first_looks import first_look
from rdq_compliance.suites._long_values import long_roundtrip, mixed_width_text
from rdq_compliance.suites._strategies import envelopes_with_extras_everywhere
from rdq_compliance.testing import (
    ATTEMPT_FIELDS,
    ENVELOPE_FIELDS,
    ERROR_FIELDS,
    EVERY_JSON_TYPE,
    INT64_MAX,
    INT64_MIN,
    Rdq,
    base_envelope,
    requirement,
    ulid,
    with_attempt,
    with_error,
)

_FIELDS = {f"x_{k}": v for k, v in EVERY_JSON_TYPE.items()}
# Every JSON type holds "", {} and [] (RDQ-RT-010), astral text and U+0000 (RDQ-RT-006),
# integers beyond 2^53 (RDQ-UF-005) and dotted keys (RDQ-RT-009): the tests that write
# them run after those requirements' tests, each after a plain test of its own.
_EVERY_TYPE_CARRIES = ("RDQ-RT-006", "RDQ-RT-009", "RDQ-RT-010", "RDQ-UF-005")
_PLAIN = {"x_text": "kept", "x_int": 7, "x_list": [1, "two"], "x_object": {"k": [3.5]}}
# Arrays of strings and of numbers out of order, with a repeat: a store that keeps an
# array as a set (a DynamoDB String or Number Set, a Redis SET) sorts and merges them.
# Strings that hold JSON: a store that tries json.loads on what it reads turns them into
# a number and null.
_SHAPED = {"x_strings": ["b", "a", "b"], "x_numbers": [2, 1, 2], "x_number_text": "5",
           "x_null_text": "null"}


@requirement("RDQ-UF-001", narrow=True)
def test_no_unknown_field_comes_back_unwritten(rdq: Rdq) -> None:
    """RDQ-UF-001 (C10): a plain envelope without unknown fields comes back without any,
    judged only by its unknown fields: a store that adds one to every read (MongoDB's
    _id) fails here, before any other test (``_first_looks``)."""
    rdq.namespace().roundtrip(first_look("no-unknown-field"))


@requirement("RDQ-UF-001")
def test_top_level_unknown_fields_are_kept(rdq: Rdq) -> None:
    """RDQ-UF-001 (C10): plain unknown top-level fields (text, numbers, lists in their
    order, repeats kept, an object, null: a serializer told to leave nulls out drops it)
    come back."""
    rdq.namespace().roundtrip(base_envelope(32, extra={**_PLAIN, **_SHAPED, "x_null": None}))


#: Names document stores and their drivers give fields of their own, at the top of the
#: document they store: a plugin that puts its own value there on write (the id, the
#: namespace as a partition key, a TTL, a version) and strips it on read loses an
#: unknown field of that name.
_STORE_FIELD_NAMES = (
    "_id",  # MongoDB, CouchDB
    "_rev",  # CouchDB
    "_key",  # ArangoDB
    "_class",  # Spring Data MongoDB's type hint
    "__v", "createdAt", "updatedAt",  # Mongoose's version key and timestamps
    "_rid", "_self", "_etag", "_attachments", "_ts",  # Cosmos DB's system properties
    "ttl", "pk", "sk", "namespace", "partition_key",  # TTL and partition keys
    "PartitionKey", "RowKey", "Timestamp",  # Azure Table storage
    "@metadata",  # RavenDB
    "expireAt",  # a MongoDB TTL index's field
)


@requirement("RDQ-UF-001")
def test_unknown_fields_named_as_a_stores_own_are_kept(rdq: Rdq) -> None:
    """RDQ-UF-001 (C10): unknown top-level fields named as document stores name fields
    of their own (``_STORE_FIELD_NAMES``: MongoDB's _id, Cosmos DB's system properties
    and ttl, a partition key, Mongoose's __v) come back as written."""
    extra = {name: f"{name} as the writer wrote it" for name in _STORE_FIELD_NAMES}
    rdq.namespace().roundtrip(base_envelope(64, extra=extra))


@requirement("RDQ-UF-002")
def test_attempt_unknown_fields_are_kept(rdq: Rdq) -> None:
    """RDQ-UF-002 (C10): plain unknown fields of an attempt record come back."""
    rdq.namespace().roundtrip(with_attempt(base_envelope(33), extra=_PLAIN))


@requirement("RDQ-UF-003")
def test_error_unknown_fields_are_kept(rdq: Rdq) -> None:
    """RDQ-UF-003 (C10): plain unknown fields of the error object come back."""
    rdq.namespace().roundtrip(with_error(base_envelope(34), extra=_PLAIN))


@requirement("RDQ-UF-001", carries=_EVERY_TYPE_CARRIES)
def test_top_level_unknown_fields_of_every_type(rdq: Rdq) -> None:
    """RDQ-UF-001 (C10): unknown top-level fields of every JSON type (null, booleans,
    numbers, strings, empty and nested arrays and objects, trap keys) come back."""
    extra = {**_FIELDS, "": "empty key", "__proto__": {"a": 1}, "$set": [1], "a.b": "dot",
             "attempt_no": 3, "type": "shadows an error field"}
    rdq.namespace().roundtrip(base_envelope(21, extra=extra))


@requirement("RDQ-UF-001", kind="property")
def test_generated_top_level_unknown_fields(rdq: Rdq) -> None:
    """RDQ-UF-001 (C10): generated unknown top-level fields."""
    ns = rdq.namespace()

    def roundtrip(id: str, extra: dict[str, Any]) -> None:
        ns.roundtrip(base_envelope(21, id=id, extra=extra))

    rdq.for_all(roundtrip, budget="targeted", id=ids(),
                extra=unknown_field_maps(forbidden_keys=ENVELOPE_FIELDS, max_size=5))


@requirement("RDQ-UF-002", carries=_EVERY_TYPE_CARRIES)
def test_attempt_unknown_fields_of_every_type(rdq: Rdq) -> None:
    """RDQ-UF-002 (C10): unknown fields of every JSON type in an attempt record."""
    extra = {**_FIELDS, "status": "shadows a top-level field", "": None}
    rdq.namespace().roundtrip(with_attempt(base_envelope(22), extra=extra))


@requirement("RDQ-UF-002", kind="property")
def test_generated_attempt_unknown_fields(rdq: Rdq) -> None:
    """RDQ-UF-002 (C10): generated unknown fields in an attempt record."""
    ns = rdq.namespace()

    def roundtrip(extra: dict[str, Any]) -> None:
        ns.roundtrip(with_attempt(base_envelope(23), extra=extra))

    rdq.for_all(roundtrip, budget="targeted",
                extra=unknown_field_maps(forbidden_keys=ATTEMPT_FIELDS, max_size=5))


@requirement("RDQ-UF-003", carries=_EVERY_TYPE_CARRIES)
def test_error_unknown_fields_of_every_type(rdq: Rdq) -> None:
    """RDQ-UF-003 (C10): unknown fields of every JSON type in the error object."""
    extra = {**_FIELDS, "outcome": "shadows an attempt field", "id": 1}
    rdq.namespace().roundtrip(with_error(base_envelope(24), extra=extra))


@requirement("RDQ-UF-003", kind="property")
def test_generated_error_unknown_fields(rdq: Rdq) -> None:
    """RDQ-UF-003 (C10): generated unknown fields in the error object."""
    ns = rdq.namespace()

    def roundtrip(extra: dict[str, Any]) -> None:
        ns.roundtrip(with_error(base_envelope(25), extra=extra))

    rdq.for_all(roundtrip, budget="targeted",
                extra=unknown_field_maps(forbidden_keys=ERROR_FIELDS, max_size=5))


# Unknown field names that a store can take for one another, or for a known field of their
# object (C10: the same key comes back): names that differ only in case (a side table keyed
# by name in a case-insensitive collation, SQL Server's default and MySQL's *_ci; Go's
# encoding/json and Jackson's ACCEPT_CASE_INSENSITIVE_PROPERTIES matching keys to fields
# ignoring case), in trailing spaces (SQL compares VARCHAR keys with PAD SPACE) or in accents
# (MySQL 8's default utf8mb4_0900_ai_ci). Each value differs, so a merge shows. The known
# fields' look-alikes hold values of the known field's type: a decoder that takes them for
# the field changes it silently. Accented names: after RDQ-RT-006's tests.
_ALIKE = {"k": "lower", "K": "upper", "k ": "trailing space", "ke": "plain", "ké": "accented"}
_ALIKE_CARRIES = ("RDQ-RT-006",)


@requirement("RDQ-UF-001", carries=_ALIKE_CARRIES)
def test_top_level_unknown_field_names_that_a_collation_merges(rdq: Rdq) -> None:
    """RDQ-UF-001 (C10): unknown top-level fields whose names differ from one another,
    or from a known field, only in case, trailing spaces or accents come back, each
    under its own name; the known fields keep their values."""
    extra = {**_ALIKE, "ID": ulid(9_001), "Queue": "from.the.unknown.field",
             "Headers": {"from": "the unknown field"}, "Attempt_Count": 99,
             "CREATED_AT": "2001-02-03T04:05:06.789Z"}
    rdq.namespace().roundtrip(base_envelope(38, extra=extra))


@requirement("RDQ-UF-002", carries=_ALIKE_CARRIES)
def test_attempt_unknown_field_names_that_a_collation_merges(rdq: Rdq) -> None:
    """RDQ-UF-002 (C10): an attempt's unknown fields whose names differ from one another,
    or from a known field, only in case, trailing spaces or accents come back."""
    extra = {**_ALIKE, "Attempt_No": 99, "OUTCOME": Outcome.SUCCESS.value,
             "Started_At": "2001-02-03T04:05:06.789Z"}
    rdq.namespace().roundtrip(with_attempt(base_envelope(39), extra=extra))


@requirement("RDQ-UF-003", carries=_ALIKE_CARRIES)
def test_error_unknown_field_names_that_a_collation_merges(rdq: Rdq) -> None:
    """RDQ-UF-003 (C10): an error's unknown fields whose names differ from one another,
    or from a known field, only in case, trailing spaces or accents come back."""
    extra = {**_ALIKE, "Message": "from the unknown field", "TYPE": "unknown.Field",
             "Detail": {"from": "the unknown field"}}
    rdq.namespace().roundtrip(with_error(base_envelope(40), extra=extra))


# Many unknown fields at one level: a store that keeps them one per row of a side table
# (a key-value table inserted in one statement: SQLite binds at most 32,766 parameters,
# 10,922 rows of three) or one per column (PostgreSQL: at most 1,600) loses or refuses
# some; 11,000 goes past both. Short keys and values: the envelope stays far under 1 MiB,
# but past 64 KiB, so the tests run after RDQ-ST-005's (a store capped at 64 KiB fails
# that first).
_MANY = (1_000, 11_000)
_PAST_64K = ("RDQ-ST-005",)


def _many_fields(count: int) -> dict[str, Any]:
    values = mixed_width_text(count, 8 * count, multibyte=False)
    return {f"x_u{i:05d}": values[8 * i:8 * i + 8] for i in range(count)}


@requirement("RDQ-UF-001", carries=_PAST_64K)
@pytest.mark.parametrize("count", _MANY)
def test_many_top_level_unknown_fields(rdq: Rdq, count: int) -> None:
    """RDQ-UF-001 (C10, C2): 1,000 and 11,000 unknown top-level fields come back."""
    env = base_envelope(35, extra=_many_fields(count))
    long_roundtrip(rdq, rdq.namespace(), env, f"an envelope with {count:,} unknown fields")


@requirement("RDQ-UF-002", carries=_PAST_64K)
@pytest.mark.parametrize("count", _MANY)
def test_many_attempt_unknown_fields(rdq: Rdq, count: int) -> None:
    """RDQ-UF-002 (C10, C2): 1,000 and 11,000 unknown fields of one attempt come back."""
    env = with_attempt(base_envelope(36), extra=_many_fields(count))
    long_roundtrip(rdq, rdq.namespace(), env, f"an attempt with {count:,} unknown fields")


@requirement("RDQ-UF-003", carries=_PAST_64K)
@pytest.mark.parametrize("count", _MANY)
def test_many_error_unknown_fields(rdq: Rdq, count: int) -> None:
    """RDQ-UF-003 (C10, C2): 1,000 and 11,000 unknown fields of one error come back."""
    env = with_error(base_envelope(37), extra=_many_fields(count))
    long_roundtrip(rdq, rdq.namespace(), env, f"an error with {count:,} unknown fields")


@requirement("RDQ-UF-001", kind="property")
def test_generated_unknown_fields_everywhere(rdq: Rdq) -> None:
    """RDQ-UF-001 (C10): generated unknown fields at every level at once (top, attempt,
    error) with a generated detail."""
    ns = rdq.namespace()

    def roundtrip(env: Envelope) -> None:
        ns.roundtrip(env)

    rdq.for_all(roundtrip, budget="targeted", env=envelopes_with_extras_everywhere())


_PAYLOAD_REFS = {
    "string": "s3://bucket/tasks/01J2ZK7Q8XW5H3N9G4T6B8RDQ0",
    "object": {"store": "s3", "bucket": "b", "key": "k", "size": 1_048_577},
    "null": None,
}


@requirement("RDQ-UF-004")
@pytest.mark.parametrize("value", list(_PAYLOAD_REFS.values()), ids=list(_PAYLOAD_REFS))
def test_payload_ref_is_preserved(rdq: Rdq, value: Any) -> None:
    """RDQ-UF-004 (C10): payload_ref, reserved in v1, is kept like any unknown field."""
    rdq.namespace().roundtrip(base_envelope(26, extra={"payload_ref": value}))


_NUMBERS = {
    "int64-max": INT64_MAX,
    "int64-min": INT64_MIN,
    "2p53+1": 2**53 + 1,
    "minus-2p53+1": -(2**53 + 1),
    "min-subnormal": 5e-324,
    "max-double": 1.7976931348623157e308,
    "min-double": -1.7976931348623157e308,
    "1e308": 1e308,
    "min-normal": 2.2250738585072014e-308,
    "negative-zero": -0.0,
    "point-one": 0.1,
    "integral-double": 1.0,
    "long-fraction": 0.30000000000000004,
    "big-integral-double": 9007199254740993.0,
}


@requirement("RDQ-UF-005")
@pytest.mark.parametrize("number", list(_NUMBERS.values()), ids=list(_NUMBERS))
def test_numbers_are_exact(rdq: Rdq, number: float) -> None:
    """RDQ-UF-005 (C5): the number keeps its value in unknown fields at every level and
    in detail (integral doubles may come back as integers)."""
    env = with_error(with_attempt(base_envelope(27, extra={"n": number, "a": [number]}),
                                  extra={"n": number}),
                     detail={"n": number}, extra={"n": number})
    rdq.namespace().roundtrip(env)


@requirement("RDQ-UF-005", kind="property")
def test_generated_numbers_are_exact(rdq: Rdq) -> None:
    """RDQ-UF-005 (C5): generated int64 integers and finite doubles in unknown fields
    and detail."""
    ns = rdq.namespace()
    numbers = st.integers(INT64_MIN, INT64_MAX) | st.floats(allow_nan=False,
                                                            allow_infinity=False)

    def roundtrip(values: list[float]) -> None:
        env = with_error(base_envelope(28, extra={"n": values}), detail=values)
        ns.roundtrip(env)

    rdq.for_all(roundtrip, budget="targeted", values=st.lists(numbers, min_size=1,
                                                              max_size=8))


@requirement("RDQ-UF-006")
@pytest.mark.parametrize("detail", list(EVERY_JSON_TYPE.values()), ids=list(EVERY_JSON_TYPE))
def test_detail_of_every_type(rdq: Rdq, detail: Any) -> None:
    """RDQ-UF-006 (C10): error.detail is opaque JSON of any type and comes back unchanged."""
    rdq.namespace().roundtrip(with_error(base_envelope(29), detail=detail))


@requirement("RDQ-UF-006", kind="property")
def test_generated_detail(rdq: Rdq) -> None:
    """RDQ-UF-006 (C10): generated detail values."""
    ns = rdq.namespace()

    def roundtrip(detail: Any) -> None:
        ns.roundtrip(with_error(base_envelope(30), detail=detail))

    rdq.for_all(roundtrip, budget="targeted", detail=json_values(max_leaves=12))


def _nested(levels: int, leaf: Any) -> Any:
    # Arrays and objects in turn, so that a limit on either kind is met.
    for i in range(levels - 1):
        leaf = [leaf] if i % 2 == 0 else {"k": leaf}
    return leaf


@requirement("RDQ-UF-007")
@pytest.mark.parametrize("levels", [65, 101, 129, 400], ids=lambda n: f"depth-{n}")
def test_deep_values(rdq: Rdq, levels: int) -> None:
    """RDQ-UF-007 (C10): unknown fields (top level, attempt, error) and detail nested
    ``levels`` deep come back unchanged. C10 allows any JSON value, so only C2's 1 MiB
    bounds depth; the depths are one past the limits of .NET System.Text.Json (64),
    MySQL JSON and MongoDB BSON (100) and serde_json (128), and a few hundred."""
    leaf = {"n": INT64_MAX, "d": 0.1, "s": "é", "t": True, "z": None, "e": [], "o": {}}
    value = _nested(levels, leaf)
    env = with_error(with_attempt(base_envelope(31, extra={"deep": value}), extra={"deep": value}),
                     detail=value, extra={"deep": value})
    rdq.namespace().roundtrip(env)
