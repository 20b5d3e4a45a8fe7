"""Spark's type error on a join key, told as the model's file and join (no JVM: the message
is the one Spark 3.5 gives, ``tests/integration/test_delta_join_changes.py`` runs it)."""

from __future__ import annotations

from lakewide.compiler.queries.join_errors import join_type_error
from lakewide.vocabulary.errors import ModelRunError
from tests.compiler.model.test_delta_join import build

SPARK = (
    '[DATATYPE_MISMATCH.BINARY_OP_DIFF_TYPES] Cannot resolve "(customer_id = customer_id)" '
    "due to data type mismatch: the left and right operands of the binary operator have "
    'incompatible types ("DATE" and "INT").; line 1 pos 455;'
)


def test_a_join_key_spark_cannot_compare_names_the_model_file_and_the_join() -> None:
    model = build()
    named = join_type_error(model.node, model.bootstrap, ModelRunError(SPARK))
    assert named is not None and str(named.path) == "models/m.sql"
    assert named.key == "join c" and "pos 455" not in named.message
    assert named.message.startswith(
        "the join LEFT JOIN lw.ods.customers AS c ON o.customer_id = c.customer_id compares "
        "o.customer_id (DATE) with c.customer_id (INT)"
    )
    assert "CAST(o.customer_id AS INT) = c.customer_id" in named.message


def test_other_errors_are_left_as_they_are() -> None:
    model = build()
    assert join_type_error(model.node, model.bootstrap, ModelRunError("disk full")) is None
    other = SPARK.replace("customer_id = customer_id", "amount = tier")
    assert join_type_error(model.node, model.bootstrap, ModelRunError(other)) is None
