"""The vocabulary: the words every layer shares, the bottom layer, importing nothing of lakewide.

* ``dialect``: the one SQL dialect, Spark SQL, and the one printer of statements;
* ``errors``: the one error root, ``LakewideError``, and its exit codes;
* ``events``: the run events library code emits and their listeners;
* ``faults``: crash and pause injection for lakewide's own crash and race tests.
"""
