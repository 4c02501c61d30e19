"""The hooks a storage plugin implements: the reference for plugin authors.

A storage plugin is any object (usually a module) with functions decorated by
:data:`rdq_compliance.hookimpl`, registered under the ``rdq.storage`` entry-point
group. The entry-point name is the plugin name used with ``--rdq-plugin``::

    # pyproject.toml of your plugin
    [project.entry-points."rdq.storage"]
    mine = "rdq_plugin_mine"

    # rdq_plugin_mine/__init__.py
    from rdq_compliance import OptionSpec, hookimpl

    @hookimpl
    def rdq_storage_options():
        return [OptionSpec("dsn", default="postgresql://127.0.0.1/test", env="MINE_DSN")]

    @hookimpl
    def rdq_storage_open(options):
        return MineStorage(options["dsn"])

The kit loads only the plugins named with ``--rdq-plugin`` and calls each
plugin's hooks on that plugin alone.

Threads: a plugin whose ``StorageInfo.capabilities`` holds ``"concurrent"``
(C18) may be called from several threads at once — ``open``, ``drop`` and
every adapter's ``write``/``read``, with several adapters open on one namespace,
as the many workers of an rdq server call it — and must keep each write atomic,
lose no write and let a read that starts after a write returned see it. A plugin
that does not declare it is called by one thread at a time.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pluggy

from ._protocol import OptionSpec, Storage

__all__ = ["PROJECT_NAME", "hookimpl", "hookspec"]

PROJECT_NAME = "rdq"
hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)


@hookspec(firstresult=True)
def rdq_storage_options() -> Sequence[OptionSpec]:  # type: ignore[empty-body]
    """Declare the settings the plugin takes through ``--rdq-option NAME=VALUE``.

    Return a sequence of :class:`~rdq_compliance.OptionSpec`. The kit rejects an
    option the plugin did not declare (a usage error that lists the declared
    ones), fills in environment values and defaults, and reports a missing
    required setting before any test runs. ``{worker}`` in a value (given, from the
    environment or a default) becomes the process's name, ``gw0``, ``gw1``… in an
    xdist worker and ``main`` otherwise, so that a default such as
    ``.rdq/db-{worker}.sqlite`` gives each worker a store of its own. Optional: a
    plugin without settings need not implement it.
    """


@hookspec(firstresult=True)
def rdq_storage_open(options: Mapping[str, str]) -> Storage:  # type: ignore[empty-body]
    """Create the :class:`~rdq_compliance.Storage` under test.

    ``options`` holds every declared setting, resolved. Called once per kit
    process (the run, each xdist worker, and the xdist controller, which only reads
    ``info`` and closes it) and again whenever the kit needs a fresh instance (the
    C15 durability check closes the storage and opens a new one, so a cache cannot
    hide lossy storage). A kit process holds one storage and at most 4 adapters
    open at once, closing each adapter when its test no longer needs it (a
    ``concurrent`` plugin: one adapter more per concurrency lane, at most 4, while
    the lanes run); a namespace's data must outlive its adapters, as the kit may
    close an adapter and open another on the same namespace. One connection per
    adapter therefore needs at most 5 per process (9 with ``concurrent``). Connect
    here and fail fast: raise
    :class:`~rdq_compliance.StorageUnavailable` when the server cannot be
    reached, naming the server and the setting to change; the kit then reports
    one clear error instead of a failure per test.

    What the storage must do (checked by the suites; details on
    :class:`~rdq_compliance.Storage` and :class:`~rdq_compliance.Adapter`):
    every namespace name matching ``[a-z][a-z0-9_]{0,39}`` is a namespace of its
    own, ``a`` as much as a 40-character name, and names that are prefixes of one
    another, equal in their first 32 characters or alike as SQL ``LIKE`` patterns
    never share data and are never dropped together (C14); an adapter keeps no
    reference to the envelope object it was given, and holds any number of
    envelopes without evicting one (C13a).
    """
