"""The compiler: model nodes in, sqlglot statements out. Never imports pyspark.

Its folders by stage, each importing only the folders below it: ``plans`` (run plans, the
output) above ``queries``, ``schema`` and ``statements``, above ``folds``, above ``model``,
above ``aggregates`` and ``trees``. Run-time modules import only these names, the step types
(``plans.steps``, ``trees.placeholders``) and ``plans.upstream``
(``tests/compiler/plans/test_run_plan.py`` checks it).
"""

from lakewide.compiler.model.wide_model import WideModel, analyze
from lakewide.compiler.plans.compiled import CompiledModel, compile_model
from lakewide.compiler.plans.run_plan import PlanContext
from lakewide.compiler.plans.source_merge import SourceMerge
from lakewide.compiler.queries.join_errors import join_type_error

__all__ = [
    "CompiledModel",
    "PlanContext",
    "SourceMerge",
    "WideModel",
    "analyze",
    "compile_model",
    "join_type_error",
]
