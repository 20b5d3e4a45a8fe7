"""Running models and seeds on Spark: the executor and its scheduler, one module per kind of
run (key table, delta join, snapshot), the step runner that executes compiled plan steps,
read modes and the refresh choice, runs on an environment's branch, outcomes, seed loading.

Imports ``run.schema`` only."""
