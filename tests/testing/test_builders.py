"""The envelope builders of the testing API: deterministic ids."""

from __future__ import annotations

import dataclasses
import random

from rdq_compliance import is_canonical_id
from rdq_compliance.testing import base_envelope, random_id, ulid, with_attempt, with_error


def test_ulid_is_a_pure_function_of_n() -> None:
    assert ulid(0) == "01J2ZK7Q8X0000000000000000"
    assert ulid(33) == "01J2ZK7Q8X0000000000000011"
    assert ulid(2**80 - 1) == "01J2ZK7Q8XZZZZZZZZZZZZZZZZ"
    assert ulid(2**81 + 5) == ulid(2**80 + 5) == ulid(5)  # the low 80 bits: 16 characters
    assert ulid(-1) == ulid(2**80 - 1)
    assert len({ulid(n) for n in range(1000)}) == 1000


def test_random_id_follows_the_rng() -> None:
    digits = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
    a, b = random.Random(7), random.Random(7)
    for _ in range(200):
        # What the upgrade corpus drew before random_id (saved corpora keep their ids):
        # a first character of 0-7, then 25 Crockford digits, one choice each.
        expected = b.choice("01234567") + "".join(b.choice(digits) for _ in range(25))
        got = random_id(a)
        assert got == expected
        assert is_canonical_id(got)


def test_with_attempt_and_with_error_change_the_first_attempt_only() -> None:
    """The builders change the first attempt (or its error) and keep every other attempt
    and field as they were: a builder that dropped the later attempts, as the core
    tests' own copies did, or touched another attempt fails here."""
    env = base_envelope(3)
    second = dataclasses.replace(env.attempts[0], attempt_no=2, error=None)
    env = dataclasses.replace(env, attempts=(env.attempts[0], second))

    changed = with_attempt(env, extra={"x": 1})
    assert changed.attempts[0] == dataclasses.replace(env.attempts[0], extra={"x": 1})
    assert changed.attempts[1:] == (second,)
    assert dataclasses.replace(changed, attempts=env.attempts) == env

    errored = with_error(env, message="m", extra={"y": [1]})
    assert env.attempts[0].error is not None
    assert errored.attempts[0].error == dataclasses.replace(
        env.attempts[0].error, message="m", extra={"y": [1]}
    )
    assert dataclasses.replace(errored.attempts[0], error=env.attempts[0].error) == env.attempts[0]
    assert errored.attempts[1:] == (second,)
