"""Issue 22 §3, end to end: a plugin with one PostgreSQL connection per adapter passes the
whole kit on a server whose ``max_connections`` is 20, alone and under ``-n 2``. The kit
keeps at most 4 adapters and 1 storage open per process (see
``rdq_compliance/testing/_owned_namespaces.py``); before it did, one test held 25 adapters."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.mutants._harness import run_kit

from ._scratch_postgres import scratch_postgres

PLUGIN = "tests.plugins_example._pg_conn_per_adapter:"


@pytest.fixture(scope="module")
def small_server() -> Iterator[str]:
    psycopg = pytest.importorskip("psycopg")
    with scratch_postgres("max_connections=20") as dsn:
        with psycopg.connect(dsn) as conn:
            row = conn.execute("SHOW max_connections").fetchone()
        assert row == ("20",), row
        yield dsn


# slow_ci (issue 25 §5): .ci/run runs it; `bash .ci/test` keeps the budget's own check,
# tests/testing/test_connection_budget.py (a witness plugin that fails past the budget,
# quick runs alone and under -n 2), which fails when the kit's budget is removed.
@pytest.mark.slow_ci
@pytest.mark.parametrize("workers", [(), ("-n", "2")], ids=["alone", "n2"])
def test_one_connection_per_adapter_passes_with_max_connections_20(
    small_server: str, workers: tuple[str, ...]
) -> None:
    result = run_kit([f"--rdq-plugin={PLUGIN}", "--rdq-option", f"dsn={small_server}"],
                     extra=workers, profile="ci")
    assert result.report is not None, result.describe()
    assert result.verdict(PLUGIN) == "compliant", (result.failed(PLUGIN), result.describe())
    assert result.returncode == 0, result.describe()
    assert result.plugin(PLUGIN)["capabilities_verified"] == ["durable"]
