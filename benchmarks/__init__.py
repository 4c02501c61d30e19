"""Benchmarks of the rdq compliance kit (issue 6). Run ``python benchmarks/run.py``."""
