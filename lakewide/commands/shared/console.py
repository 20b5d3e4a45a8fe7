"""The console every command prints to."""

from __future__ import annotations

import os
import sys

from rich.console import Console

# Piped output (CI logs, `| less`) gets room for wide tables instead of 80 columns.
console = Console(
    highlight=False,
    soft_wrap=True,
    width=None if sys.stdout.isatty() or "COLUMNS" in os.environ else 200,
)
