"""The model DAG: topological order, cycles and selectors."""

from __future__ import annotations

from pathlib import Path

import pytest

from lakewide.project.config.model_config import parse_model_config
from lakewide.project.graph import select, topological_order
from lakewide.project.nodes import ModelNode, Relation
from lakewide.vocabulary.errors import ConfigError

ROOT = Path("/proj")


def node(name: str, *refs: str, tags: tuple[str, ...] = (), folder: str = "models") -> ModelNode:
    config = parse_model_config({"tags": list(tags)}, path=f"{folder}/{name}.sql")
    return ModelNode(
        name=name,
        path=ROOT / folder / f"{name}.sql",
        raw_sql="SELECT 1",
        sql="SELECT 1",
        config=config,
        relation=Relation("lw", "db", name),
        refs=list(refs),
    )


def graph(*nodes: ModelNode) -> dict[str, ModelNode]:
    return {n.name: n for n in nodes}


# stg_a, stg_b -> mid -> wide -> report ; lonely
DAG = graph(
    node("report", "wide", tags=("mart",)),
    node("wide", "mid", tags=("wide", "mart"), folder="models/sub"),
    node("mid", "stg_a", "stg_b", folder="models/sub/deeper"),
    node("stg_b", tags=("staging",)),
    node("stg_a", tags=("staging",)),
    node("lonely"),
)


def test_topological_order_parents_first_ties_by_name() -> None:
    assert topological_order(DAG) == ["lonely", "stg_a", "stg_b", "mid", "wide", "report"]


def test_topological_order_respects_every_edge() -> None:
    order = topological_order(DAG)
    for name, model in DAG.items():
        for parent in model.refs:
            assert order.index(parent) < order.index(name)


def test_diamond_order() -> None:
    models = graph(node("d", "b", "c"), node("c", "a"), node("b", "a"), node("a"))
    assert topological_order(models) == ["a", "b", "c", "d"]


def test_cycle_error_prints_the_cycle_path() -> None:
    models = graph(node("a", "b"), node("b", "a"), node("c"))
    with pytest.raises(ConfigError) as info:
        topological_order(models)
    assert "models form a cycle: a -> b -> a" in info.value.message
    assert "remove one of these ref()s" in info.value.message


def test_cycle_downstream_node_is_not_part_of_the_printed_cycle() -> None:
    models = graph(node("a", "c"), node("b", "x"), node("c", "b"), node("x", "c"))
    # a depends on the cycle c -> b -> x -> c but is not in it
    with pytest.raises(ConfigError) as info:
        topological_order(models)
    printed = info.value.message.split("cycle: ")[1].split(";")[0].split(" -> ")
    assert printed[0] == printed[-1] and sorted(printed[:-1]) == ["b", "c", "x"]
    for child, parent in zip(printed, printed[1:]):
        assert parent in models[child].refs  # each arrow is a real ref()


def test_self_reference_is_a_cycle() -> None:
    with pytest.raises(ConfigError, match="cycle: a -> a"):
        topological_order(graph(node("a", "a")))


def test_refs_outside_the_models_are_ignored_for_order() -> None:
    assert topological_order(graph(node("a", "disabled_one"))) == ["a"]


def run(selectors: list[str] | None, exclude: list[str] | None = None) -> list[str]:
    return select(DAG, selectors, exclude, ROOT)


def test_no_selector_selects_everything_in_order() -> None:
    assert run(None) == topological_order(DAG)
    assert run([]) == topological_order(DAG)


def test_select_by_name() -> None:
    assert run(["mid"]) == ["mid"]


def test_select_upstream() -> None:
    assert run(["+wide"]) == ["stg_a", "stg_b", "mid", "wide"]


def test_select_downstream() -> None:
    assert run(["mid+"]) == ["mid", "wide", "report"]


def test_select_both_directions() -> None:
    assert run(["+mid+"]) == ["stg_a", "stg_b", "mid", "wide", "report"]


def test_select_by_tag() -> None:
    assert run(["tag:mart"]) == ["wide", "report"]
    assert run(["tag:staging"]) == ["stg_a", "stg_b"]


def test_select_by_path_includes_subfolders() -> None:
    assert run(["path:models/sub"]) == ["mid", "wide"]
    assert run(["path:models/sub/deeper/mid.sql"]) == ["mid"]


def test_path_selector_does_not_match_a_sibling_prefix() -> None:
    models = graph(node("x", folder="models/sub"), node("y", folder="models/subway"))
    assert select(models, ["path:models/sub"], None, ROOT) == ["x"]


def test_union_of_selectors_and_exclude() -> None:
    assert run(["tag:staging", "report"]) == ["stg_a", "stg_b", "report"]
    assert run(["+wide"], ["tag:staging"]) == ["mid", "wide"]
    assert run(None, ["lonely", "mid+"]) == ["stg_a", "stg_b"]


def test_unknown_selector_lists_models() -> None:
    with pytest.raises(ConfigError) as info:
        run(["wdie+"])
    msg = info.value.message
    assert "selector 'wdie+' matches no model" in msg
    assert "lonely, mid, report, stg_a, stg_b, wide" in msg
    assert "tag:x" in msg


def test_unknown_exclude_is_an_error_too() -> None:
    with pytest.raises(ConfigError, match="selector 'nope' matches no model"):
        run(None, ["nope"])
