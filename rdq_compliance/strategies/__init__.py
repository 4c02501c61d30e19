"""Hypothesis strategies for the rdq task envelope (v1).

Use them in your own tests the way the kit does::

    from hypothesis import given
    from rdq_compliance.strategies import envelopes

    @given(envelopes())
    def test_round_trip(env):
        assert adapter_read(adapter_write(env)) == env

Every generated envelope is valid (``validate(env) == []``), and the
strategies lean towards the values real stores get wrong: U+0000 and astral
characters, combining sequences, the empty header key, int64 bounds, -0.0,
the first and last valid instants, names of exactly 240 characters, texts cut
at their byte limits, texts at the column limits of real stores (``long_texts``;
``COLUMN_LIMITS``, in bytes), long values in real shapes (bearer JWTs, W3C trace
context, MIME parameters, JVM/Go type names, image digests) (``EPOCH`` and
``LAST_INSTANT`` are the first and last valid instants, for fixed examples). Invalid arguments raise
:class:`hypothesis.errors.InvalidArgument` when the strategy function is called.
"""

from ._envelopes import (
    attempts,
    envelopes,
    envelopes_of_other_versions,
    errors,
)
from ._headers import header_maps
from ._identifiers import ids, names
from ._json_values import json_values, unknown_field_maps
from ._payloads import payloads
from ._texts import COLUMN_LIMITS, free_texts, long_texts, truncated_texts
from ._timestamps import EPOCH, LAST_INSTANT, timestamps

__all__ = [
    "COLUMN_LIMITS",
    "EPOCH",
    "LAST_INSTANT",
    "attempts",
    "envelopes",
    "envelopes_of_other_versions",
    "errors",
    "free_texts",
    "header_maps",
    "ids",
    "json_values",
    "long_texts",
    "names",
    "payloads",
    "timestamps",
    "truncated_texts",
    "unknown_field_maps",
]
