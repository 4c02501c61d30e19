"""rdq_compliance.reporting reads results: it imports no pytest, Hypothesis or suite."""

from __future__ import annotations

import subprocess
import sys


def test_reporting_imports_no_pytest_hypothesis_or_suite():
    code = (
        "import sys, rdq_compliance.reporting, rdq_compliance.reporting._cli\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in "
        "('pytest', '_pytest', 'hypothesis') or m.startswith('rdq_compliance.suites'))\n"
        "print(bad)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "[]"
