"""What the modules a test's handle is built from need of it: :class:`Context`.

:class:`~._handle.Rdq` is built from namespaces (``_owned_namespaces``,
``_namespace_handle``), generated checks (``_properties``) and the shared one-character
namespace (``_shared``); each of those needs a few facts and the failing and calling of
the handle. They ask for this protocol, which ``Rdq`` implements, so that no module below
``_handle`` imports it back (the import graph keeps no cycle, type-only imports
included). The run's settings live here for the same reason.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, Protocol

if TYPE_CHECKING:
    import pytest

    from .._requirements import Requirement
    from ..envelope._model import Envelope
    from ..reporting._symptom import Symptom
    from ._case import Case
    from ._exampledb import ExampleDb
    from ._failures import CheckFailed, OperationHung
    from ._runtime import PluginRuntime

__all__ = ["Context", "KitSettings"]


@dataclass(frozen=True)
class KitSettings:
    """The validated kit options of this run."""

    labels: tuple[str, ...]
    profile: str
    seed: int
    timeout: float
    failures_dir: Path
    replay: Case | None
    run_token: str = ""
    """Shared by every process of one run; in every namespace name (see Rdq.new_name)."""
    worker: str = ""
    """The xdist worker number ("" outside xdist): names of two workers never collide."""
    example_db: ExampleDb | None = None
    """``--rdq-example-db``: the Hypothesis example database shared by runs (None: none)."""


class Context(Protocol):
    """One test's handle as the modules below ``Rdq`` see it (``Rdq`` documents each)."""

    item: pytest.Item
    requirement: Requirement
    runtime: PluginRuntime
    settings: KitSettings
    example: tuple[str, dict[str, Any]] | None
    on_check_failed: Callable[[CheckFailed], None] | None
    judges: str | None

    @property
    def label(self) -> str: ...

    @property
    def profile(self) -> str: ...

    @property
    def seed(self) -> int: ...

    @property
    def params(self) -> dict[str, str]: ...

    @property
    def test_name(self) -> str: ...

    @property
    def replay(self) -> Case | None: ...

    def fail(
        self, summary: str, *, detail: str = "", envelopes: Collection[Envelope] = (),
        symptom: Symptom | None = None, difference: str = "",
    ) -> NoReturn: ...

    def hung(self, exc: OperationHung, envelopes: Collection[Envelope]) -> NoReturn: ...

    def call(
        self, operation: str, fn: Callable[..., Any], *args: Any,
        envelopes: Collection[Envelope] = (),
    ) -> Any: ...
