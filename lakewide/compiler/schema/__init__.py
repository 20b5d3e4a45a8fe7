"""A key table's schema over time: its model contract (what its rows were folded by), the
schema changes from a stored contract to the current one, and the ALTER statements of its
changelog table.

Imports ``statements`` and the folders below it; ``plans`` does not import it."""
