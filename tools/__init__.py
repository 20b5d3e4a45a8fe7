"""Repository tools that are not part of the lakewide package: ``tools.docs_reference`` writes
the docs site's generated reference pages (``python -m tools.docs_reference``)."""
