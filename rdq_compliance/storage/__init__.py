"""The storage-plugin interface: protocols, errors, the pluggy hooks and discovery.

Implementation only: its public names are re-exported once, by :mod:`rdq_compliance`
(``from rdq_compliance import Storage, hookimpl``); the hook specifications and their
reference docs are in :mod:`rdq_compliance.storage.hookspecs`.
"""
