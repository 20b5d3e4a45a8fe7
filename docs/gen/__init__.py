"""Generators of the docs site's reference pages (``python -m docs.gen.reference``)."""
