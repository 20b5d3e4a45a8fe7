"""``python -m lakewide``: the same as the ``lakewide`` command."""

from lakewide.cli import main

main()
