"""Keeping tables after their runs: ``lakewide maintain`` (Iceberg procedures and retention,
step by step), publishing an environment's branch (write-audit-publish) and what
``run --watch`` refreshes at a poll.

Imports ``run.models`` and ``run.testing``; no other run folder imports it."""
