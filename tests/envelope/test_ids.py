"""Envelope ids (C6)."""

from __future__ import annotations

import time

import pytest
from ulid import ULID

from rdq_compliance import is_canonical_id, new_id
from rdq_compliance.envelope._ids import id_from_int, parse_id


def test_new_id_is_canonical_and_unique() -> None:
    ids = [new_id() for _ in range(200)]
    assert all(is_canonical_id(i) for i in ids)
    assert len(set(ids)) == 200


def test_new_ids_sort_by_time() -> None:
    first = new_id()
    time.sleep(0.002)
    assert new_id() > first


@pytest.mark.parametrize(
    "value",
    [
        "01J2ZK7Q8XW5H3N9G4T6B8RDQ0",
        "00000000000000000000000000",
        "7ZZZZZZZZZZZZZZZZZZZZZZZZZ",
        "0123456789ABCDEFGHJKMNPQRS",
        "0TVWXYZ0000000000000000000",
    ],
)
def test_canonical(value: str) -> None:
    assert is_canonical_id(value)
    assert str(parse_id(value)) == value


@pytest.mark.parametrize(
    "value",
    [
        "01j2zk7q8xw5h3n9g4t6b8rdq0",  # lower case
        "01J2ZK7Q8XW5H3N9G4T6B8RDQi",
        "01J2ZK7Q8XW5H3N9G4T6B8RDQI",
        "01J2ZK7Q8XW5H3N9G4T6B8RDQL",
        "01J2ZK7Q8XW5H3N9G4T6B8RDQO",
        "01J2ZK7Q8XW5H3N9G4T6B8RDQU",
        "80000000000000000000000000",  # above 128 bits
        "0000000000000000000000000",
        "000000000000000000000000000",
        "",
        "01J2ZK7Q8XW5H3N9G4T6B8RDQ\u0660",
        "01J2ZK7Q8XW5H3N9G4T6B8RDQ0\n",
    ],
)
def test_not_canonical(value: str) -> None:
    assert not is_canonical_id(value)
    with pytest.raises(ValueError, match="id="):
        parse_id(value)


def test_non_strings_are_not_ids() -> None:
    ulid = ULID()
    assert not is_canonical_id(ulid)
    assert not is_canonical_id(None)
    assert not is_canonical_id(ulid.bytes)


_DIGITS = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"  # Crockford, written here: an independent model


@pytest.mark.parametrize("value", [0, 1, 31, 32, 2**80 - 1, 2**125, 2**128 - 1, 0x0123456789ABCDEF])
def test_id_from_int_is_the_crockford_text_of_the_value(value: int) -> None:
    expected = "".join(_DIGITS[(value >> (5 * (25 - i))) & 31] for i in range(26))
    assert id_from_int(value) == expected
    assert is_canonical_id(expected)
