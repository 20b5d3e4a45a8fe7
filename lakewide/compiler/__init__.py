"""The compiler: model nodes in, sqlglot statements out. Never imports pyspark.

Run-time modules import only these names (``tests/compiler/test_run_plan.py`` checks it).
"""

from lakewide.compiler.compiled import CompiledModel, compile_model
from lakewide.compiler.join_errors import join_type_error
from lakewide.compiler.run_plan import PlanContext
from lakewide.compiler.source_merge import SourceMerge
from lakewide.compiler.wide_model import WideModel, analyze

__all__ = [
    "CompiledModel",
    "PlanContext",
    "SourceMerge",
    "WideModel",
    "analyze",
    "compile_model",
    "join_type_error",
]
