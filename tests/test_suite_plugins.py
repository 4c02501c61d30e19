"""The suite's own plugins (``tests/conftest.py``): ``tests/_xdist_groups.py`` (under
``-n 2 --dist loadgroup`` the tests of one ``xdist_group`` run on one worker, so the kit
runs they share are made once) and ``tests/_selection.py`` (``slow_ci`` tests only with
``RDQ_SLOW_CI=1`` or a ``-m`` naming them)."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_a_group_runs_on_one_worker(pytester: pytest.Pytester,
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    pytester.makeconftest('pytest_plugins = ["tests._xdist_groups"]\n')
    pytester.makepyfile(
        test_a_grouped="""
            import os

            import pytest

            pytestmark = pytest.mark.xdist_group("shared")

            @pytest.mark.parametrize("i", range(4))
            def test_grouped(i):
                with open("workers.log", "a") as f:
                    f.write(f"grouped {os.environ['PYTEST_XDIST_WORKER']}\\n")
        """,
        test_b_free="""
            import os

            import pytest

            @pytest.mark.parametrize("i", range(4))
            def test_free(i):
                with open("workers.log", "a") as f:
                    f.write(f"free {os.environ['PYTEST_XDIST_WORKER']}\\n")
        """,
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-n", "2",
                                           "--dist", "loadgroup")
    result.assert_outcomes(passed=8)
    lines = [ln.split() for ln in (pytester.path / "workers.log").read_text().splitlines()]
    grouped = {w for kind, w in lines if kind == "grouped"}
    assert len(grouped) == 1, lines  # the four grouped tests on one worker
    assert {w for _, w in lines} == {"gw0", "gw1"}, lines  # both workers had work


@pytest.mark.parametrize(("env", "args", "ran"), [
    (None, (), ["test_quick", "test_twin"]),
    ("1", (), ["test_quick", "test_slow"]),
    (None, ("-m", "slow_ci"), ["test_slow"]),
    (None, ("-m", "not slow_ci"), ["test_quick", "test_twin"]),
    ("1", ("-m", "not slow_ci"), ["test_quick", "test_twin"]),
])
def test_slow_ci_tests_run_only_when_asked(pytester: pytest.Pytester,
                                           monkeypatch: pytest.MonkeyPatch, env: str | None,
                                           args: tuple[str, ...], ran: list[str]) -> None:
    if env is None:
        monkeypatch.delenv("RDQ_SLOW_CI", raising=False)
    else:
        monkeypatch.setenv("RDQ_SLOW_CI", env)
    pytester.makeini("[pytest]\nmarkers =\n    slow_ci: slow\n    quick_twin: twin\n")
    pytester.makeconftest('pytest_plugins = ["tests._selection"]\n')
    pytester.makepyfile(test_m="""
        import pytest

        def test_quick():
            pass

        @pytest.mark.slow_ci
        def test_slow():
            pass

        @pytest.mark.quick_twin
        def test_twin():
            pass
    """)
    result = pytester.runpytest("-p", "no:cacheprovider", "-v", *args)
    assert sorted(ln.split("::")[1].split()[0] for ln in result.outlines
                  if "PASSED" in ln) == ran, result.outlines
    if env is None and not args:
        result.stdout.fnmatch_lines(["*slow_ci tests left out*", "*1 deselected*"])
    if env == "1" and not args:
        result.stdout.fnmatch_lines(["*1 deselected*"])  # the twin
