"""Plugins that mutate or keep the envelope object they were given (C13a), in process.

``Namespace.write`` skips its diff when the plugin's copy is provably the kit's envelope
(``_copy.untouched``); that shortcut compares the two as they are, never the store's own
word, so a plugin that mutates the copy in place (at any depth) or keeps it and changes
it later still fails: at the write, or at the read that returns it."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from rdq_compliance import Envelope
from rdq_compliance._requirements import get_requirement
from rdq_compliance.testing import CheckFailed
from rdq_compliance.testing._context import KitSettings
from rdq_compliance.testing._handle import Rdq

from ._fake_plugin import Adapter, Plugin
from ._fake_runtime import started_runtime
from .test_copy import full_envelope


@pytest.fixture
def rdq() -> Rdq:
    runtime = started_runtime(Plugin(), 5.0)
    item: Any = SimpleNamespace(name="test_x", originalname="test_x")
    settings = KitSettings(("fake",), "quick", 0, 5.0, Path("unused"), None)
    return Rdq(item, get_requirement("RDQ-RT-001"), runtime, settings)


def _deep_list(env: Envelope) -> list[Any]:
    """A list deep inside the envelope: the first attempt's error detail."""
    error = env.attempts[0].error
    assert error is not None
    detail: Any = error.detail
    return detail["n"][1]["deep"]  # type: ignore[no-any-return]


@pytest.mark.parametrize("mutation", [
    lambda env: env.headers.__setitem__("a", "changed"),
    lambda env: _deep_list(env).append(3),
    lambda env: _deep_list(env).__setitem__(0, "2"),
    lambda env: env.extra["future"]["k"].__setitem__(0, 1),  # true became 1
    lambda env: object.__setattr__(env, "queue", "other"),
], ids=["header", "deep-append", "number-to-string", "bool-to-int", "frozen-field"])
def test_a_plugin_that_mutates_its_input_fails_the_write(
    rdq: Rdq, monkeypatch: pytest.MonkeyPatch, mutation: Any
) -> None:
    write = Adapter.write

    def mutating_write(self: Adapter, envelope: Envelope) -> None:
        write(self, envelope)
        mutation(envelope)

    monkeypatch.setattr(Adapter, "write", mutating_write)
    ns = rdq.namespace()
    with pytest.raises(CheckFailed, match="changed the envelope object it was given"):
        ns.write(full_envelope())
    rdq.teardown()


def test_a_plugin_that_keeps_the_object_and_mutates_it_later_fails_the_read(
    rdq: Rdq, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The fake store keeps the very object it was given (an alias): the write is clean,
    # then the store changes what it holds; the read returns that same object.
    read = Adapter.read

    def read_after_mutating(self: Adapter, id: str) -> Envelope | None:
        got = read(self, id)
        if got is not None:
            _deep_list(got).append("later")
        return got

    monkeypatch.setattr(Adapter, "read", read_after_mutating)
    ns = rdq.namespace()
    env = full_envelope()
    ns.write(env)
    assert ns.last_given is not None and ns.last_given is not env
    with pytest.raises(CheckFailed, match="differs from the one written"):
        ns.expect(env.id, env)
    rdq.teardown()


def test_an_aliasing_plugin_that_changes_nothing_passes(rdq: Rdq) -> None:
    ns = rdq.namespace()
    env = full_envelope()
    ns.write(env)
    ns.expect(env.id, env)
    rdq.teardown()
