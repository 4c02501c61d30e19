"""Golden fixtures: every valid fixture of each declared version round-trips (RDQ-GOLD-001)."""

from __future__ import annotations

import pytest

from rdq_compliance._corpus import Fixture, valid_fixtures
from rdq_compliance.testing import Rdq, requirement


@requirement("RDQ-GOLD-001")
@pytest.mark.parametrize("fixture", valid_fixtures(), ids=lambda f: f.id)
def test_golden_fixture_roundtrips(rdq: Rdq, fixture: Fixture) -> None:
    """RDQ-GOLD-001 (C3–C10, C12): the golden fixture, written, reads back unchanged."""
    if fixture.envelope_version not in rdq.info.envelope_versions:
        pytest.skip(
            f"plugin declares envelope versions {sorted(rdq.info.envelope_versions)}, "
            f"not {fixture.envelope_version}"
        )
    rdq.namespace().roundtrip(fixture.envelope())
