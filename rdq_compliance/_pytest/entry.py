"""The ``pytest11`` entry point: options only, until ``--rdq-plugin`` is given.

Kept tiny on purpose: it is imported by every pytest run on a machine where the
kit is installed, so it imports no storage plugin, no Hypothesis and no suite.
"""

from __future__ import annotations

import pytest

from ._options import add_options, option

pytest_addoption = add_options


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config, parser: pytest.Parser,
                                  args: list[str]) -> None:
    from ._rootdir import undo_stray_setup  # an option value must not pick the rootdir

    undo_stray_setup(early_config, parser, args)


def pytest_configure(config: pytest.Config) -> None:
    # Registered in every run: a suite module imported outside a kit run (the kit's own
    # tests, --strict-markers) must not warn about its marker.
    config.addinivalue_line(
        "markers", "rdq_requirement(id): the rdq requirement a kit test checks"
    )
    if not option(config, "rdq_plugins"):
        return  # without --rdq-plugin the kit adds nothing to a pytest run
    from . import _baseline, _github, _shard, kit, reporting_plugin

    try:
        kit.configure(config)
        reporting_plugin.configure(config)
        _github.configure(config)  # JUnit properties of failures, GitHub annotations
        _baseline.configure(config)  # --rdq-baseline
        _shard.configure(config)  # --rdq-shard
    except pytest.UsageError as exc:
        # A CI job archives the report whatever happened: it says why nothing ran.
        reporting_plugin.write_usage_error_outputs(config, str(exc))
        raise
