"""Helpers over sqlglot trees every stage shares: copying a tree without the parts a builder
replaces, pointing a statement at pinned reads, and named parameters (``:name``) with their
binding.

Imports no other compiler folder."""
