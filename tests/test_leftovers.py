"""The session-end leftover check of the kit's own suite (``tests/_leftovers.py``) can fail:
it sees an object carrying a logged run token on each server, and a session whose test
leaves one exits 1 and lists it. Every object made here carries a fresh random token and
is removed by this test; nothing else on the shared servers is touched."""

from __future__ import annotations

import secrets
from collections.abc import Iterator

import pytest

from rdq_compliance._pytest._settings import TOKEN_LOG_ENV
from tests import _leftovers
from tests.plugins_example.conftest import local_redis, unavailable


def test_a_token_is_found_anywhere_in_a_name() -> None:
    assert _leftovers.tokens_in("rdq_t0123abcd1w1f_envelope", {"0123abcd"})
    assert _leftovers.tokens_in("rdq:t0123abcdw0:01J2ZK7Q8XW5H3N9G4T6B8RDQ0", {"0123abcd"})
    assert not _leftovers.tokens_in("rdq_t0123abce1w1f", {"0123abcd"})
    assert not _leftovers.tokens_in("rdq_a", {"0123abcd"})


@pytest.fixture
def planted() -> Iterator[str]:
    """One object per server named as a kit run names its namespace's, for a fresh token."""
    psycopg = pytest.importorskip("psycopg")
    pymysql = pytest.importorskip("pymysql")
    redis = pytest.importorskip("redis")
    token = secrets.token_hex(4)
    ns = f"t{token}0w0"
    try:
        pg = psycopg.connect("postgresql://postgres@127.0.0.1:5432/test", connect_timeout=3,
                             autocommit=True)
        my = pymysql.connect(host="127.0.0.1", port=3306, user="root", password="",
                             database="test", connect_timeout=3, autocommit=True)
        rd = redis.Redis.from_url("redis://127.0.0.1:6379/0", socket_connect_timeout=3)
        rd.ping()
    except Exception as exc:
        unavailable(f"a local server is unavailable: {exc}")
    try:
        pg.execute(f"CREATE SCHEMA rdq_{ns}")
        with my.cursor() as cur:
            cur.execute(f"CREATE TABLE rdq_{ns}_envelope (id VARCHAR(26) PRIMARY KEY)")
        rd.set(f"rdq:{ns}:01J2ZK7Q8XW5H3N9G4T6B8RDQ0", b"x")
        yield token
    finally:
        pg.execute(f"DROP SCHEMA IF EXISTS rdq_{ns} CASCADE")
        with my.cursor() as cur:
            cur.execute(f"DROP TABLE IF EXISTS rdq_{ns}_envelope")
        rd.delete(f"rdq:{ns}:01J2ZK7Q8XW5H3N9G4T6B8RDQ0")
        pg.close()
        my.close()
        rd.close()


def test_the_check_sees_an_object_of_a_logged_token_on_each_server(planted: str) -> None:
    ns = f"t{planted}0w0"
    found, down = _leftovers.leftovers({planted})
    assert not down
    assert sorted(found) == sorted([
        f"PostgreSQL schema rdq_{ns}", f"MariaDB table test.rdq_{ns}_envelope",
        f"Redis key rdq:{ns}:01J2ZK7Q8XW5H3N9G4T6B8RDQ0"])
    assert _leftovers.leftovers({secrets.token_hex(4)}) == ([], [])


def test_a_session_whose_test_leaves_an_object_fails_and_lists_it(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = local_redis()
    token = secrets.token_hex(4)
    key = f"rdq:t{token}0w0:01J2ZK7Q8XW5H3N9G4T6B8RDQ0"
    monkeypatch.delenv(TOKEN_LOG_ENV, raising=False)  # the inner session logs its own
    pytester.makepyfile(test_inner=f"""
        import os, redis
        def test_leaves_a_key():
            with open(os.environ[{TOKEN_LOG_ENV!r}], "a") as f:
                f.write({token!r} + "\\n")
            redis.Redis.from_url("redis://127.0.0.1:6379/0").set({key!r}, b"x")
        """)
    try:
        result = pytester.runpytest("-p", "tests._leftovers", "-p", "no:cacheprovider")
        assert result.ret == pytest.ExitCode.TESTS_FAILED, result.stdout.str()
        result.stdout.fnmatch_lines([
            "*objects left on the servers by this session's kit runs*",
            f"Redis key {key}",
            "1 object(s) carry the run token of a kit run this session started*",
        ])
        client.delete(key)
        pytester.makepyfile(test_inner=f"""
            import os
            def test_leaves_nothing():
                with open(os.environ[{TOKEN_LOG_ENV!r}], "a") as f:
                    f.write({token!r} + "\\n")
            """)
        clean = pytester.runpytest("-p", "tests._leftovers", "-p", "no:cacheprovider")
        assert clean.ret == pytest.ExitCode.OK, clean.stdout.str()
        assert "objects left on the servers" not in clean.stdout.str()
    finally:
        client.delete(key)
        client.close()
