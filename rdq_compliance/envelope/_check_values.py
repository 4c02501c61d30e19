"""The JSON value rules of the validator (C4, C5, C8a, C10, C1 limits): one pass's
primitives, shared by the envelope walk (``_check_envelope``) and the model walk."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from ._codes import ViolationCode as C
from ._deep import SURROGATE as _SURROGATE
from ._deep import short_repr
from ._json import json_type_name
from ._limits import INT64_MAX, INT64_MIN, MAX_KNOWN_INT, NAME_MAX_CHARS
from ._violations import Violation, pointer_token
from ._wire import timestamp_problem

_NAME = re.compile(r"[a-z0-9._-]+")


class _Skip:
    """Stands for a model value whose Python type was already reported."""

    __slots__ = ()


_SKIP: Any = _Skip()


def _short(value: object, limit: int = 60) -> str:
    text = short_repr(value, limit)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _absent_member_bytes(name: str) -> int:
    # ,"name":null  -- what canonical form adds for an absent optional field (C9).
    return len(name) + 8


class _ValueChecker:
    """One pass over a JSON object. ``check_keys``: keys may be other than str (not
    from parse_json). ``check_surrogates``: strings may hold lone surrogates (neither
    parse_json nor a strict UTF-8 encoding has ruled them out).

    JSON pointers are built only for values that break a rule: the valid envelope,
    by far the common case, costs no string formatting."""

    __slots__ = ("absent_bytes", "check_keys", "check_surrogates", "model_wire", "out")

    def __init__(
        self, *, check_keys: bool, check_surrogates: bool, model_wire: bool = False
    ) -> None:
        self.out: list[Violation] = []
        self.check_keys = check_keys
        self.check_surrogates = check_surrogates
        # The wire form _ModelChecker built: every timestamp text is format_timestamp()
        # of a datetime it accepted (only the year can still be wrong), and the payload
        # is base64.b64encode() of bytes (canonical by construction) or "" standing for it.
        self.model_wire = model_wire
        self.absent_bytes = 0

    # -- primitives -------------------------------------------------------------

    def add(self, code: C, ptr: str, message: str) -> None:
        self.out.append(Violation(code, ptr, message))

    def type_error(self, ptr: str, expected: str, value: object) -> None:
        got = "a float with a fraction or exponent" if type(value) is float else None
        self.add(
            C.FIELD_TYPE,
            ptr,
            f"expected {expected}, got {got or json_type_name(value)}: {_short(value)}",
        )

    def string(self, value: object, ptr: str, *, nullable: bool = False) -> bool:
        """True when ``value`` is a string (reported otherwise); None is fine if nullable."""
        if type(value) is str:
            if self.check_surrogates:
                self.surrogates(value, ptr, "string")
            return True
        if value is None and nullable:
            return False
        if value is not _SKIP:
            self.type_error(ptr, "a string" + (" or null" if nullable else ""), value)
        return False

    def surrogates(self, value: str, ptr: str, what: str) -> None:
        m = _SURROGATE.search(value)
        if m is not None:
            self.add(
                C.LONE_SURROGATE,
                ptr,
                f"{what} holds a lone surrogate U+{ord(m.group()):04X} at code point "
                f"{m.start()}; strings must be Unicode scalar values (C4)",
            )

    def known_int(self, value: object, ptr: str) -> bool:
        if type(value) is int:
            if 0 <= value <= MAX_KNOWN_INT:
                return True
            self.add(
                C.INTEGER_RANGE,
                ptr,
                f"{value} is out of range; expected 0 to {MAX_KNOWN_INT} (C5)",
            )
            return False
        if value is _SKIP:
            return False
        if type(value) is float and value.is_integer():
            self.add(
                C.FIELD_TYPE,
                ptr,
                f"expected an integer, got {value!r}; write it without fraction or exponent "
                "(integer decoders in Go and Java reject it)",
            )
        else:
            self.type_error(ptr, "an integer", value)
        return False

    def timestamp(self, value: object, ptr: str, *, nullable: bool = False) -> bool:
        if type(value) is not str:
            if not (value is None and nullable) and value is not _SKIP:
                self.type_error(ptr, "a timestamp string" + (" or null" if nullable else ""), value)
            return False
        if self.model_wire and value[:4] >= "1970":
            return True
        problem = timestamp_problem(value)
        if problem is None:
            return True
        kind, message = problem
        self.add(C.TIMESTAMP_FORMAT if kind == "FORMAT" else C.TIMESTAMP_RANGE, ptr, message)
        return False

    def name(self, value: object, ptr: str, length_code: C, charset_code: C) -> None:
        if not self.string(value, ptr):
            return
        assert isinstance(value, str)
        n = len(value)
        if n == 0 or n > NAME_MAX_CHARS:
            self.add(length_code, ptr, f"length {n} is out of range; expected 1 to 240 characters")
        if n and _NAME.fullmatch(value) is None:
            bad = next(c for c in value if not ("a" <= c <= "z" or "0" <= c <= "9" or c in "._-"))
            self.add(
                charset_code,
                ptr,
                f"character {bad!r} at index {value.index(bad)} is not allowed; "
                "use only a-z 0-9 . _ - (C8a)",
            )

    def limited_text(self, value: str, ptr: str, limit: int, code: C) -> None:
        if len(value) * 4 <= limit:
            return
        size = len(value.encode("utf-8", "surrogatepass"))
        if size > limit:
            self.add(
                code,
                ptr,
                f"{size} UTF-8 bytes; the limit is {limit} bytes, truncation marker included "
                "(truncate with rdq_compliance.truncate_message / truncate_stack, C1)",
            )

    def json_object(self, value: object, ptr: str, what: str, *, nullable: bool = False) -> bool:
        if type(value) is dict:
            if self.check_keys:
                self.keys(value, ptr)
            return True
        if not (value is None and nullable) and value is not _SKIP:
            self.type_error(ptr, what + (" or null" if nullable else ""), value)
        return False

    def keys(self, value: Mapping[Any, Any], ptr: str) -> None:
        for key in value:
            if type(key) is not str:
                self.add(C.FIELD_TYPE, ptr, f"key {key!r} is not a string; JSON keys are strings")
            elif self.check_surrogates and _SURROGATE.search(key) is not None:
                self.surrogates(key, f"{ptr}/{pointer_token(key)}", "key")

    def clean_json(self, value: Any) -> bool:
        """True when :meth:`any_json` would report nothing in ``value`` (without building
        a pointer); False when it might. Any depth: an explicit stack."""
        t = type(value)
        if t is not list and t is not dict:
            return self._clean_leaf(value)
        stack: list[Any] = [value]
        leaf = self._clean_leaf
        while stack:
            value = stack.pop()
            if type(value) is list:
                for item in value:
                    t = type(item)
                    if t is list or t is dict:
                        stack.append(item)
                    elif not leaf(item):
                        return False
            else:
                for key, item in value.items():
                    if type(key) is not str or not leaf(key):
                        return False
                    t = type(item)
                    if t is list or t is dict:
                        stack.append(item)
                    elif not leaf(item):
                        return False
        return True

    def _clean_leaf(self, value: Any) -> bool:
        t = type(value)
        if t is str:
            return not self.check_surrogates or _SURROGATE.search(value) is None
        if t is int:
            return bool(INT64_MIN <= value <= INT64_MAX)
        if t is float:
            return math.isfinite(value)
        return value is None or t is bool

    def any_json(self, value: Any, ptr: str) -> None:
        """Unknown fields and ``detail``: any JSON value, numbers in range (C5)."""
        if (type(value) is list or type(value) is dict) and self.clean_json(value):
            return  # the common case: no pointer for every nested value
        self.json_value(value, ptr)

    def unknown(self, value: Any, ptr: str, key: object) -> None:
        """An unknown field ``key`` of the object at ``ptr`` (C10): any JSON value."""
        if not self.clean_json(value):  # the pointer only for a violation
            self.json_value(value, f"{ptr}/{pointer_token(str(key))}")

    def json_value(self, value: Any, ptr: str) -> None:
        """Report what breaks C4/C5/C10 in ``value``, depth first in document order,
        with an explicit stack (C10 sets no depth limit)."""
        stack: list[tuple[Any, str]] = [(value, ptr)]
        while stack:
            value, ptr = stack.pop()
            t = type(value)
            if t is str:
                if self.check_surrogates:
                    self.surrogates(value, ptr, "string")
            elif t is int:
                if not INT64_MIN <= value <= INT64_MAX:
                    self.add(
                        C.NUMBER_RANGE,
                        ptr,
                        f"integer {_short(value)} is outside the signed 64-bit range (C5)",
                    )
            elif t is float:
                if not math.isfinite(value):
                    self.add(
                        C.NUMBER_RANGE,
                        ptr,
                        f"number {value!r} is not finite (e.g. 1e999 overflows a double); "
                        "C5 allows finite doubles only",
                    )
            elif t is list:
                stack.extend((value[i], f"{ptr}/{i}") for i in range(len(value) - 1, -1, -1))
            elif t is dict:
                if self.check_keys:
                    self.keys(value, ptr)
                stack.extend(
                    (item, f"{ptr}/{pointer_token(str(key))}")
                    for key, item in reversed(value.items())
                )
            elif value is not None and t is not bool and value is not _SKIP:
                self.add(
                    C.FIELD_TYPE,
                    ptr,
                    f"{type(value).__name__} {_short(value)} is not a JSON value "
                    "(null, bool, int, float, str, list, dict)",
                )

    def members(
        self,
        obj: Mapping[str, Any],
        ptr: str,
        known: frozenset[str],
        required: tuple[str, ...],
        optional: tuple[str, ...],
    ) -> None:
        """FIELD_MISSING for each absent required field; the bytes canonical text
        writes for each absent optional one (C2)."""
        if known <= obj.keys():
            return  # every field present, the common case: one check in C
        for name in required:
            if name not in obj:
                self.add(C.FIELD_MISSING, f"{ptr}/{name}", f"required field {name!r} is absent")
        for name in optional:
            if name not in obj:
                self.absent_bytes += _absent_member_bytes(name)
