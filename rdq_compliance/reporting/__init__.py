"""Conformance reports: results, verdicts, report JSON, badges, summaries (H5 fills this)."""
