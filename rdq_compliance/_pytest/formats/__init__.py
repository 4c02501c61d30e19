"""The report formats: one module per file a kit run can write.

Each module of this package whose name does not start with ``_`` is a format unit: it
defines ``FORMAT``, a :class:`ReportFormat` (its option and ini twin, its configure
check, its writer). The options (``_options.add_options``) and the reporting glue
(``reporting_plugin``) take the formats from :func:`report_formats` and nowhere else, so
adding a format is adding one module here. The renderers stay in
:mod:`rdq_compliance.reporting` (no pytest there); a unit is the pytest-side glue.
"""

from __future__ import annotations

import importlib
import pkgutil

from ._base import ReportFormat

__all__ = ["ReportFormat", "report_formats"]


def report_formats() -> tuple[ReportFormat, ...]:
    """Every format unit of this package, by ``order`` (then flag): the order of
    ``--help``, of the files written and of their terminal lines."""
    found = []
    # Scanned on each call, not cached: a few module lookups, two or three times a run.
    for unit in pkgutil.iter_modules(__path__):
        if unit.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{unit.name}")
        fmt = getattr(module, "FORMAT", None)
        if not isinstance(fmt, ReportFormat):
            raise TypeError(f"report format module {module.__name__!r} defines "
                            f"FORMAT={fmt!r}; expected a ReportFormat (or name the module "
                            "with a leading '_' if it is not a format)")
        found.append(fmt)
    return tuple(sorted(found, key=lambda f: (f.order, f.flag)))
