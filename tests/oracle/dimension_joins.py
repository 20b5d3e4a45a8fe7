"""Plain-Python reference of a wide table fed by a fact table joined to a dimension.

Facts are ``(order_id, customer_id, amount, ts)`` records, the dimension maps
``customer_id -> value``; the model keeps per order the last non-null ``amount`` and dimension
value by ``(ts, arrival)`` (partial_update), or the sum of the dimension values (aggregation).
``lookup``: a fact record takes the dimension as it was in the run that consumed it; ``delta``
(and a rebuild): every record takes the current dimension.
"""

from __future__ import annotations

from typing import Any

Fact = tuple[int, int, int, int]  # order_id, customer_id, amount, ts


def _fold(records: list[tuple[Fact, Any]], engine: str) -> list[tuple]:
    """``records``: (fact, dimension value it joined) in arrival order."""
    out: dict[int, dict[str, Any]] = {}
    ordered = sorted(enumerate(records), key=lambda pair: (pair[1][0][3], pair[0]))
    for _, ((order_id, _customer, amount, ts), value) in ordered:
        row = out.setdefault(order_id, {"amount": None, "value": None, "ts": None})
        if engine == "aggregation":
            row["amount"] = amount if amount is not None else row["amount"]
            if value is not None:
                row["value"] = (row["value"] or 0) + value
        else:
            for column, new in (("amount", amount), ("value", value)):
                if new is not None:
                    row[column] = new
        row["ts"] = ts
    return sorted((k, r["amount"], r["value"], r["ts"]) for k, r in out.items())


def expected(
    runs: list[tuple[list[Fact], dict[int, Any]]], semantics: str, engine: str = "partial_update"
) -> list[tuple]:
    """The table after ``runs``: each run's new fact records and the dimension as of that run
    (the whole mapping, after the run's dimension changes)."""
    records: list[tuple[Fact, Any]] = []
    for facts, dimension in runs:
        records += [(fact, dimension.get(fact[1])) for fact in facts]
    if semantics == "delta" and runs:
        current = runs[-1][1]
        records = [(fact, current.get(fact[1])) for fact, _ in records]
    return _fold(records, engine)


# ------------------------------------------------ the plain join over both inputs' current state

Order = tuple[int, int, int, Any, int]  # order_id, customer_id, store_id, amount, ts
Customer = tuple[str | None, Any]  # tier, points


def plain_join(
    orders: dict[int, Order], customers: dict[int, Customer], spec: Any, columns: list[str]
) -> list[tuple]:
    """What a rebuild gives: ``orders LEFT JOIN customers`` over their current rows, each
    joined row a record of ``spec`` (``tests/oracle/engines.Spec``) folded at once, as
    ``columns`` tuples (``tier``/``pts``: the customer's values, NULL without one)."""
    from tests.oracle.engines import as_rows, bootstrap

    records = []
    for order_id, customer, store, amount, ts in orders.values():
        tier, points = customers.get(customer, (None, None))
        row = {"order_id": order_id, "store_id": store, "amt": amount, "tier": tier}
        row |= {"pts": points, "ts": ts}
        records.append((0, {c: row[c] for c in columns}))
    return as_rows(bootstrap(spec, records), columns)
