"""The testing API: what a compliance suite is written against (the kit's and yours).

A suite is a pytest module of tests, each tagged with the requirement it checks and
taking the ``rdq`` fixture, the per-test :class:`Rdq` handle on the plugin under test::

    from rdq_compliance.testing import Rdq, base_envelope, requirement

    @requirement("RDQ-ST-001")
    def test_write_replaces(rdq: Rdq) -> None:
        \"\"\"RDQ-ST-001 (C13): a second write of an id replaces the first.\"\"\"
        ns = rdq.namespace()                      # a fresh namespace, dropped at teardown
        ns.write(base_envelope(1))
        newer = base_envelope(1, queue="other")
        ns.write(newer)
        ns.expect(newer.id, newer)                # exactly this, or the test fails

Through the handle a test calls the plugin (every call guarded: a hang, an exception or
a wrong type fails the test with a message naming the requirement and the plugin), opens
namespaces (:class:`Namespace`: ``write``, ``read``, ``expect``, ``roundtrip``), runs
Hypothesis properties (``rdq.for_all``, ``@requirement(..., kind="property")``) and state
machines (``rdq.run_machine``, ``kind="machine"``), and fails with ``rdq.fail``. Expected
values come from the test (builders below, :mod:`rdq_compliance.strategies`), never from
an earlier read of the store. Envelope and storage names come from :mod:`rdq_compliance`.

This package knows nothing of the pytest plugin that runs it (``rdq_compliance._pytest``
builds the handle for each test); it imports Hypothesis only when a property runs.
"""

from ..envelope._limits import INT64_MAX, INT64_MIN, MAX_KNOWN_INT
from ..envelope._wire import ATTEMPT_FIELDS, ENVELOPE_FIELDS, ERROR_FIELDS
from ._builders import (
    EVERY_JSON_TYPE,
    T0,
    base_envelope,
    random_id,
    ulid,
    with_attempt,
    with_error,
)
from ._failures import C17_CODES, CheckFailed, OperationHung
from ._handle import Rdq
from ._lanes import Lane, now_ns
from ._marker import requirement
from ._namespace_handle import Namespace
from ._properties import PROFILES, derived_seed
from ._upgrade import DROPPED, Saved

__all__ = [
    "ATTEMPT_FIELDS",
    "C17_CODES",
    "DROPPED",
    "ENVELOPE_FIELDS",
    "ERROR_FIELDS",
    "EVERY_JSON_TYPE",
    "INT64_MAX",
    "INT64_MIN",
    "MAX_KNOWN_INT",
    "PROFILES",
    "T0",
    "CheckFailed",
    "Lane",
    "Namespace",
    "OperationHung",
    "Rdq",
    "Saved",
    "base_envelope",
    "derived_seed",
    "now_ns",
    "random_id",
    "requirement",
    "ulid",
    "with_attempt",
    "with_error",
]
