"""A third-party suite: a plugin's own extra checks, written only on the public API.

Not collected here (no ``test_`` prefix): ``test_third_party_suite.py`` copies it into a
pytester directory as ``test_my_store.py`` and runs it with the kit, the way a plugin
author runs it next to the plugin: ``pytest --rdq-plugin=NAME test_my_store.py``.
Each test takes the ``rdq`` fixture and tags a registered requirement, whose docstring
cites the id and a clause; its results count towards that requirement in the report.
"""

from __future__ import annotations

from rdq_compliance import Envelope
from rdq_compliance.strategies import envelopes
from rdq_compliance.testing import Rdq, base_envelope, requirement


@requirement("RDQ-ST-001")
def test_ten_rewrites_keep_the_last(rdq: Rdq) -> None:
    """RDQ-ST-001 (C13): ten writes of one id read back as the tenth."""
    ns = rdq.namespace()  # a fresh namespace, dropped at teardown
    versions = [base_envelope(7, handler_version=f"v{n}") for n in range(10)]
    for env in versions:
        ns.write(env)
    ns.expect(versions[-1].id, versions[-1], why="the last of ten writes")


@requirement("RDQ-RT-001", kind="property")
def test_round_trip_in_two_namespaces(rdq: Rdq) -> None:
    """RDQ-RT-001 (C3, C12): a generated envelope reads back exactly from each of two
    namespaces it was written to."""
    first, second = rdq.namespace(), rdq.namespace()

    def both(env: Envelope) -> None:
        first.roundtrip(env)
        second.roundtrip(env)

    rdq.for_all(both, budget="targeted", env=envelopes())
