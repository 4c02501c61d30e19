"""The envelope core: model, strict JSON, canonical codec, validator, diff, truncation, ids.

Implementation only: its public names are re-exported once, by :mod:`rdq_compliance`
(``from rdq_compliance import Envelope, validate``). This package imports neither pytest,
pluggy nor Hypothesis, and importing ``rdq_compliance`` for these names loads none of them,
so SDK authors and tools can use the core alone.
"""
