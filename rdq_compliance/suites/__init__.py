"""The compliance suites: one test module per property family.

Collected by the kit's pytest plugin when ``--rdq-plugin`` is given; each test
is parametrized over the selected plugins and tagged with the requirement it
checks (:func:`rdq_compliance.suites._support.requirement`).
"""
