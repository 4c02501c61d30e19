"""testing/_failures.py: the C17 codes come from ErrorCode, the one list of them."""

from __future__ import annotations

from rdq_compliance import ErrorCode
from rdq_compliance.testing import C17_CODES
from rdq_compliance.testing._failures import (
    C17_TEXT,
    CheckFailed,
    OperationHung,
    find_failure,
    is_c17,
)


def test_the_c17_codes_are_the_error_codes_in_spec_order() -> None:
    assert {code.value for code in ErrorCode} == C17_CODES
    assert C17_TEXT == ("one of the C17 codes (UNSUPPORTED_ENVELOPE_VERSION, PAYLOAD_TOO_LARGE, "
                        "INVALID_ENVELOPE, NOT_SUPPORTED, INTERNAL, UNAVAILABLE)")
    assert is_c17("INTERNAL") and is_c17(ErrorCode.NOT_SUPPORTED)
    assert not is_c17("DISK_FULL") and not is_c17(None)


def test_find_failure_searches_exception_groups_depth_first() -> None:
    """The case saver and the report's root causes find a failure raised in a lane of the
    concurrency suite, inside nested exception groups, the first one depth first, and
    only of the kinds asked for."""
    hung, first, second = OperationHung("hung"), CheckFailed("first"), CheckFailed("second")
    nested = BaseExceptionGroup(
        "lanes", [ValueError("x"), BaseExceptionGroup("inner", [hung, first]), second]
    )
    assert find_failure(nested, (CheckFailed, OperationHung)) is hung
    assert find_failure(nested, CheckFailed) is first
    assert find_failure(first, CheckFailed) is first
    assert find_failure(BaseExceptionGroup("g", [ValueError("x")]), CheckFailed) is None
    assert find_failure(None, CheckFailed) is None
