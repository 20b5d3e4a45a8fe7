"""Run plans, the compiler's output: the step types a run executes (``steps``), every plan
a run of a model can take (``run_plan``, ``snapshot_plan``), their checks (``validate``),
a compiled model (``compiled``), what ``lakewide compile`` writes of them (``show_plan``,
``summary``) and a model compiled in its upstreams' context (``upstream``).

Imports every compiler folder below it; the run side reads plans, never builds SQL."""
