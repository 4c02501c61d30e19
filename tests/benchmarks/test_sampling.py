"""benchmarks/_sampling.py: every py-spy sample is charged to the right owner.

The cost split of docs/performance.md rests on this classification, so each rule
is pinned here with a stack shaped like the ones py-spy records in a kit run.
"""

from __future__ import annotations

import pytest

from benchmarks import _sampling as s

PLUGINS = ("rdq_plugin_memory",)
SITE = "/venv/lib/python3.11/site-packages"
MAIN = (
    "_run_module_as_main (<frozen runpy>:198)",
    "pytest_cmdline_main (_pytest/main.py:380)",
    "pytest_runtestloop (_pytest/main.py:410)",
    "pytest_runtest_call (_pytest/runner.py:170)",
)
WORKER = ("Thread._bootstrap (threading.py:1002)", "Thread.run (threading.py:982)",
          "Runner._loop (/repo/rdq_compliance/_pytest/_guard.py:109)",
          "_Job.run (/repo/rdq_compliance/_pytest/_guard.py:91)")
DRAW = ("BuildContext.prep_args_kwargs_from_strategies (hypothesis/control.py:202)",
        "ConjectureData.draw (hypothesis/internal/conjecture/data.py:1357)")


def category(*frames: str) -> str:
    text = ";".join(frames) + " 3\n"
    ((parsed, count),) = list(s.parse_raw(text))
    assert count == 3
    return s.categorize(parsed, PLUGINS)


@pytest.mark.parametrize(("frames", "expected"), [
    pytest.param((*WORKER, "MemoryAdapter.read (/repo/plugins_example/memory/rdq_plugin_memory/"
                  "__init__.py:117)", "parse_json (/repo/rdq_compliance/envelope/_json.py:92)"),
                 s.PLUGIN, id="the plugin's call into the public codec is the plugin's work"),
    pytest.param(("_run_module_as_main (<frozen runpy>:198)",
                  "_find_and_load (<frozen importlib._bootstrap>:1176)"),
                 s.STARTUP, id="imports before the test loop are start-up"),
    pytest.param(("pytest_collection (_pytest/main.py:397)",
                  "validate (/repo/rdq_compliance/envelope/_validate.py:72)"),
                 s.STARTUP, id="kit code during collection is start-up"),
    pytest.param((*MAIN, *DRAW, "free_texts (/repo/rdq_compliance/strategies/_texts.py:24)"),
                 s.GENERATION, id="the kit's strategies inside a draw are generation"),
    pytest.param((*MAIN, "get_state_machine_test.<locals>.run_state_machine "
                  "(hypothesis/stateful.py:213)",
                  "ConjectureData.draw (hypothesis/internal/conjecture/data.py:1357)"),
                 s.GENERATION, id="state-machine steps are generation"),
    pytest.param((*MAIN, "ConjectureRunner.generate_mutations_from "
                  f"({SITE}/hypothesis/internal/conjecture/engine.py:1400)",
                  f"SpanProperty.run ({SITE}/hypothesis/internal/conjecture/data.py:302)"),
                 s.ENGINE, id="mutation bookkeeping is Hypothesis' engine"),
    pytest.param((*MAIN, "Namespace.expect (/repo/rdq_compliance/_pytest/_context.py:515)",
                  "validate (/repo/rdq_compliance/envelope/_validate.py:72)",
                  "dumps (json/__init__.py:231)"),
                 s.KIT_CORE, id="stdlib called by the core is the core's"),
    pytest.param((*MAIN, "Rdq.call (/repo/rdq_compliance/_pytest/_context.py:224)"),
                 s.KIT_PYTEST, id="the kit's pytest layer"),
    pytest.param((*WORKER,), s.KIT_PYTEST, id="the guard thread outside a plugin call"),
    pytest.param((*MAIN, "test_write_replaces (/repo/rdq_compliance/suites/test_storage.py:55)"),
                 s.KIT_SUITES, id="a suite's test body"),
    pytest.param((*MAIN, "Namespace.expect "
                  "(/repo/rdq_compliance/testing/_namespace_handle.py:153)"),
                 s.KIT_PYTEST, id="the testing API's handle and namespaces are the kit's layer"),
    pytest.param((*MAIN, "test_write_replaces (/repo/rdq_compliance/suites/test_storage.py:55)",
                  "base_envelope (/repo/rdq_compliance/testing/_builders.py:40)"),
                 s.KIT_SUITES, id="the fixed envelopes a suite builds are the suite's"),
    pytest.param((*MAIN, "getfixturevalue (_pytest/fixtures.py:600)"),
                 s.PYTEST, id="pytest's own machinery"),
    pytest.param((*MAIN, "Rdq.for_all (/repo/rdq_compliance/_pytest/_context.py:360)",
                  "_find_and_load (<frozen importlib._bootstrap>:1176)"),
                 s.IMPORTS, id="a lazy import during the run"),
    pytest.param((*MAIN, "pytest_sessionfinish (_pytest/main.py:420)",
                  "write_report (/repo/rdq_compliance/reporting/_report.py:10)"),
                 s.KIT_PYTEST, id="writing the report after the loop is the kit's"),
])
def test_each_sample_has_one_owner(frames: tuple[str, ...], expected: str) -> None:
    assert category(*frames) == expected


def test_a_sample_without_python_frames_is_other() -> None:
    ((frames, count),) = list(s.parse_raw(" 27\n"))
    assert (frames, count) == ((), 27)
    assert s.categorize(frames, PLUGINS) == s.OTHER


def test_split_counts_every_sample_once_and_kit_functions_inclusively() -> None:
    raw = "\n".join([
        ";".join((*MAIN, *DRAW)) + " 10",
        ";".join((*MAIN, "Namespace.expect (/r/rdq_compliance/_pytest/_context.py:515)",
                  "validate (/r/rdq_compliance/envelope/_validate.py:72)",
                  "validate (/r/rdq_compliance/envelope/_validate.py:80)")) + " 4",
        ";".join((*MAIN, "Namespace.expect (/r/rdq_compliance/_pytest/_context.py:515)")) + " 2",
        "not a stack line",
    ])
    split = s.split_samples(s.parse_raw(raw), PLUGINS)
    assert split.total == 16
    assert split.samples[s.GENERATION] == 10
    assert split.samples[s.KIT_CORE] == 4
    assert split.samples[s.KIT_PYTEST] == 2
    # a recursive function counts once per sample, its callers include it
    assert split.kit_functions["envelope/_validate.py validate"] == 4
    assert split.kit_functions["_pytest/_context.py Namespace.expect"] == 6
