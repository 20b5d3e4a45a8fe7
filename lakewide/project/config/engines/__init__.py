"""Merge engines, one module each (``partial_update``, ``aggregation``, ``deduplicate``,
``first_row``): an engine's traits (``base.Engine``) and its ``config()`` model with the
Paimon rules that need only the config. ``registry`` lists them by name.

This package's ``__init__`` imports nothing: ``keys`` (which the engine modules extend)
takes the engine names from ``base``.
"""
