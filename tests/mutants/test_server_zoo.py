"""The column-length mutants on the real servers (issue 22 §6): each is non-compliant,
RDQ-RT-011 failed, with a failure message naming the field and the length refused.

One kit run per server, on RDQ-RT-011 only (``_focus``), no xdist inside: the servers
are shared (PostgreSQL's max_connections). A server that is down skips its entries, or
fails them under RDQ_REQUIRE_SERVICES=1. The unbent example plugins are shown compliant
by tests/plugins_example/test_kit_runs.py.
"""

from __future__ import annotations

import os

import pytest

from ._harness import KitResult, run_kit
from .server_zoo import SERVER_ENTRIES, ServerEntry

pytestmark = pytest.mark.zoo

REQUIRE_ENV = "RDQ_REQUIRE_SERVICES"


def _unavailable(reason: str) -> None:
    if os.environ.get(REQUIRE_ENV) == "1":
        pytest.fail(f"{REQUIRE_ENV}=1 and {reason}", pytrace=False)
    pytest.skip(f"{reason} (set {REQUIRE_ENV}=1 to fail instead)")


def _check_server(server: str) -> None:
    if server == "postgres":
        psycopg = pytest.importorskip("psycopg")
        try:
            psycopg.connect("postgresql://postgres@127.0.0.1:5432/test", connect_timeout=3).close()
        except psycopg.Error as exc:
            _unavailable(f"PostgreSQL at 127.0.0.1:5432 is unavailable: {exc}")
    else:
        pymysql = pytest.importorskip("pymysql")
        try:
            pymysql.connect(host="127.0.0.1", port=3306, user="root", password="",
                            database="test", connect_timeout=3).close()
        except pymysql.MySQLError as exc:
            _unavailable(f"MariaDB at 127.0.0.1:3306 is unavailable: {exc}")


_RUNS: dict[str, KitResult] = {}


def _run(server: str) -> KitResult:
    if server not in _RUNS:
        entries = [e for e in SERVER_ENTRIES if e.server == server]
        _RUNS[server] = run_kit([f"--rdq-plugin={e.label}" for e in entries], timeout=900,
                                focus={e.label: e.catches for e in entries})
    return _RUNS[server]


@pytest.mark.xdist_group("zoo-server")
@pytest.mark.parametrize("entry", SERVER_ENTRIES, ids=[e.id for e in SERVER_ENTRIES])
def test_column_length_mutant_is_caught_naming_field_and_length(entry: ServerEntry) -> None:
    _check_server(entry.server)
    res = _run(entry.server)
    assert res.returncode is not None and res.report is not None, res.describe()
    plugin = res.plugin(entry.label)
    assert plugin["unavailable"] is None, f"{entry.id}: {plugin['unavailable']}"
    verdict = res.verdict(entry.label)
    assert verdict == "non-compliant", (
        f"MISSED DEFECT {entry.id}: {entry.defect} ({entry.system}) — verdict {verdict!r}"
    )
    assert set(entry.catches) <= res.failed(entry.label), res.statuses(entry.label)
    messages = res.messages(entry.label)
    assert any(entry.message in m for m in messages), (
        f"{entry.id}: no failure message says {entry.message!r}; first lines:\n"
        + "\n".join(m.splitlines()[1][:200] for m in messages[:5] if "\n" in m)
    )
