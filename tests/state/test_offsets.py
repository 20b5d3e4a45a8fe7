"""The offsets vector's keys: built and read back only by lakewide.offsets."""

from __future__ import annotations

from lakewide.state.offsets import branch_offsets, offset_key, offset_relation, table_offsets


def test_offset_key_round_trips_the_relation() -> None:
    assert offset_key(0, "lw.db.orders") == "0:lw.db.orders"
    assert offset_relation(offset_key(3, "lw.db.orders")) == "lw.db.orders"
    assert offset_relation(offset_key(-1, "lw.db.a:b")) == "lw.db.a:b"


def test_table_offsets_name_every_upstream_under_no_branch() -> None:
    assert table_offsets({"lw.db.a": 5, "lw.db.b": None}) == {"-1:lw.db.a": 5, "-1:lw.db.b": None}


def test_branch_offsets_one_entry_per_driven_branch() -> None:
    drivers = [(0, "lw.db.a"), (1, None), (2, "lw.db.b"), (3, "lw.db.a")]
    assert branch_offsets(drivers, {"lw.db.a": 7}) == {
        "0:lw.db.a": 7,
        "2:lw.db.b": None,
        "3:lw.db.a": 7,
    }
