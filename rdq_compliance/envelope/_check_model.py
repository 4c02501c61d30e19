"""The typed model's Python types: the model -> wire walk that checks each type as it
writes (what a Python adapter returns), before the wire form meets the JSON rules."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from ._check_values import _SKIP, _short
from ._codes import ViolationCode as C
from ._model import Attempt, ErrorInfo, Outcome, Status
from ._violations import Violation
from ._wire import AttemptPointers, datetime_problem, format_timestamp
from ._write import ModelWriter


class _ModelChecker(ModelWriter):
    """The model -> wire walk (:class:`ModelWriter`) checking each Python type as it
    writes: a value of the wrong type is reported and becomes ``_SKIP``, so the JSON
    rules do not report it twice. JSON values are not copied (they are only read)."""

    __slots__ = ("exact_datetimes", "out", "payload_chars", "payload_text")

    def __init__(self, *, payload_text: bool = False) -> None:
        self.out: list[Violation] = []
        # False once a datetime subclass was seen: its isoformat() is not vouched for.
        self.exact_datetimes = True
        # The payload's wire text is base64.b64encode() of bytes: canonical (C7) and
        # plain ASCII that JSON writes as it is, so validation needs only its length
        # (C2). Unless ``payload_text``, the wire form holds "" and payload_chars the
        # length: building, writing and encoding up to 256 KiB of base64 text per
        # validated model was two thirds of validate(model) over generated envelopes.
        self.payload_text = payload_text
        self.payload_chars = 0

    def type_error(self, ptr: str, expected: str, value: object) -> Any:
        self.out.append(
            Violation(
                C.FIELD_TYPE,
                ptr,
                f"expected {expected}, got {type(value).__name__} {_short(value)}",
            )
        )
        return _SKIP

    def int_(self, value: object, ptr: str) -> Any:
        # Exactly int: bool, IntEnum and other subclasses are not what a reader returns.
        if type(value) is int:
            return value
        return self.type_error(ptr, "int", value)

    def text(self, value: object, ptr: str, *, nullable: bool = False) -> Any:
        if type(value) is str or (value is None and nullable):
            return value
        return self.type_error(ptr, "str" + (" or None" if nullable else ""), value)

    def timestamp(self, value: object, ptr: str, *, nullable: bool = False) -> Any:
        if value is None and nullable:
            return None
        if not isinstance(value, datetime):
            return self.type_error(ptr, "datetime" + (" or None" if nullable else ""), value)
        problem = datetime_problem(value)
        if problem is not None:
            self.out.append(Violation(C.TIMESTAMP_FORMAT, ptr, problem))
            return _SKIP
        if type(value) is not datetime:
            self.exact_datetimes = False
        return format_timestamp(value)  # years before 1970: TIMESTAMP_RANGE on the text

    def enum(self, value: object, cls: type[Status] | type[Outcome], ptr: str) -> Any:
        if isinstance(value, cls):
            return value.value
        if type(value) is str:
            return value  # not a member (the model coerces members): *_VALUE on the text
        return self.type_error(ptr, f"{cls.__name__}", value)

    def payload(self, value: object) -> Any:
        if type(value) is not bytes:
            return self.type_error("/payload", "bytes", value)
        if self.payload_text:
            return super().payload(value)
        self.payload_chars = 4 * ((len(value) + 2) // 3)
        return ""

    def headers(self, value: object) -> Any:
        if isinstance(value, Mapping):
            return dict(value)
        return self.type_error("/headers", "a Mapping[str, str]", value)

    def attempts(self, value: object) -> Any:
        if isinstance(value, tuple | list):
            return super().attempts(value)
        return self.type_error("/attempts", "a tuple of Attempt", value)

    def attempt(self, attempt: object, ptr: AttemptPointers) -> Any:
        if not isinstance(attempt, Attempt):
            return self.type_error(ptr.attempt, "Attempt", attempt)
        return super().attempt(attempt, ptr)

    def error_or_none(self, error: object, ptr: AttemptPointers) -> Any:
        if error is None or isinstance(error, ErrorInfo):
            return super().error_or_none(error, ptr)
        return self.type_error(ptr.error, "ErrorInfo or None", error)

    def json(self, value: Any) -> Any:
        return value  # any JSON: judged by the JSON rules

    def extra(self, extra: object, known: frozenset[str], ptr: str, wire: dict[str, Any]) -> None:
        if not isinstance(extra, Mapping):
            self.type_error(f"{ptr}", "a Mapping for extra (unknown fields)", extra)
            return
        for key, value in extra.items():
            if key in known:
                self.out.append(
                    Violation(
                        C.DUPLICATE_KEY,
                        ptr,
                        f"extra holds the known field {key!r}; unknown fields must not "
                        "repeat a known one (the encoding would hold the key twice)",
                    )
                )
            else:
                wire[key] = value  # non-str keys and non-JSON values: the JSON rules
