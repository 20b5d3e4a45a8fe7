"""The consoles every command prints to: ``console`` (stdout) for what a command answers (a
table's rows, a listing, a run's results), ``progress_console`` (stderr) for what it is doing
meanwhile (Spark starting, a phase starting, the live view), so that a script piping stdout
gets the answer alone."""

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
progress_console = Console(
    stderr=True,
    highlight=False,
    soft_wrap=True,
    width=None if sys.stderr.isatty() or "COLUMNS" in os.environ else 200,
)
