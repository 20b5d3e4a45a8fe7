"""Rule: number a branch's rows in arrival order where its driving table is read.

Ties between a key's records are broken by arrival (docs/concepts/arrival-order.md): the order in
which the read of the branch's driving table gives its rows (oldest commit first). A branch that
joins (a lookup, a ``delta`` or a temporal join) or computes a window shuffles its rows, so a number
taken from the branch's output would be the shuffle's order. There the driving table is read through
``(SELECT *, MONOTONICALLY_INCREASING_ID() AS __lw_row FROM t AS a) AS a`` and the number is carried
up through the derived tables (inlined CTEs) between it and the branch; the conjuncts of the WHERE
reading only the driving table go inside, so that Spark still filters the rows before the join (a
filter does not pass a non-deterministic projection).

A branch without a join or window keeps its rows in read order: it is numbered on its own
output, as is a branch whose path to its driving table aggregates, deduplicates or generates
rows (its output rows are not the read's rows, whose order is then all there is).
"""

from __future__ import annotations

from sqlglot import exp

from lakewide.compiler.model.ordering import ROW_COLUMN

#: SQL that turns a level's input rows into other rows (not one output row per input row)
ROW_MAKING = (
    exp.Explode,
    exp.ExplodeOuter,
    exp.Posexplode,
    exp.Inline,
    exp.Stack,
    exp.Unnest,
    exp.Lateral,
)


def row_number() -> exp.Expr:
    """The number of a row where it is computed (increasing along each partition's rows)."""
    return exp.func("MONOTONICALLY_INCREASING_ID")


def number_rows(select: exp.Select, projections: list[exp.Expr] | None = None) -> exp.Expr:
    """The arrival number of ``select``'s rows (a branch's SELECT, a copy the caller owns) as
    an expression of its own scope; the driving table is numbered where it is read (in place)
    when the rows are shuffled on the way to the branch's output. ``projections``: the
    branch's own, where ``select`` projects fewer (default: its own)."""
    path = _path(select)
    top = select.expressions if projections is None else projections
    if path is None or not all(_keeps_rows(s, top if s is select else None) for s in path):
        return row_number()
    reorders = any(_reorders(s, top if s is select else None) for s in path)
    if not reorders or not all(_extendable(s) for s in path[1:]):
        return row_number()
    innermost = path[-1]
    table = innermost.args["from_"].this
    alias = table.alias_or_name
    if not alias or (table.args.get("alias") and table.args["alias"].columns):
        return row_number()
    _number_table(innermost, table, alias)
    arrival = exp.column(ROW_COLUMN, table=alias)
    for level in reversed(path[1:]):
        derived = level.parent
        assert isinstance(derived, exp.Subquery)
        if not _passes_through(level, arrival):
            level.select(exp.alias_(arrival, ROW_COLUMN), append=True, copy=False)
            if derived.args["alias"].columns:
                derived.args["alias"].append("columns", exp.to_identifier(ROW_COLUMN))
        arrival = exp.column(ROW_COLUMN, table=derived.alias)
    return arrival


def _path(select: exp.Select) -> list[exp.Select] | None:
    """The SELECTs from the branch down to the one whose FROM is the driving table (through
    derived tables in FROM); None when the FROM is no table."""
    levels = [select]
    while True:
        source = levels[-1].args.get("from_")
        node = source.this if source is not None else None
        if isinstance(node, exp.Table) and isinstance(node.this, exp.Identifier):
            return levels
        if (
            isinstance(node, exp.Subquery)
            and isinstance(node.this, exp.Select)
            and node.alias
            and not node.this.args.get("with_")
        ):
            levels.append(node.this)
            continue
        return None


def _keeps_rows(select: exp.Select, projections: list[exp.Expr] | None) -> bool:
    """Whether each output row of ``select`` is one row of its FROM (joined to others)."""
    if any(select.args.get(k) for k in ("group", "distinct", "having", "laterals")):
        return False
    for projection in select.expressions if projections is None else projections:
        for node in projection.find_all(exp.AggFunc, *ROW_MAKING):
            if not (isinstance(node, exp.AggFunc) and node.find_ancestor(exp.Window)):
                return False
    return True


def _reorders(select: exp.Select, projections: list[exp.Expr] | None) -> bool:
    """Whether Spark may shuffle the level's rows: a join or a window."""
    return bool(select.args.get("joins")) or any(
        p.find(exp.Window) is not None
        for p in (select.expressions if projections is None else projections)
    )


def _extendable(select: exp.Select) -> bool:
    """Whether a derived level can carry the number up (its column list, if any, is named
    without ``*``)."""
    derived = select.parent
    named = isinstance(derived, exp.Subquery) and bool(derived.args["alias"].columns)
    return not (named and any(isinstance(p, exp.Star) for p in select.expressions))


def _passes_through(level: exp.Select, arrival: exp.Column) -> bool:
    """Whether the level's ``*`` (or ``alias.*`` of the numbered relation) already carries
    the number."""
    for projection in level.expressions:
        if isinstance(projection, exp.Star):
            return True
        if isinstance(projection, exp.Column) and isinstance(projection.this, exp.Star):
            if projection.table.lower() == arrival.table.lower():
                return True
    return False


def _number_table(select: exp.Select, table: exp.Table, alias: str) -> None:
    """Read ``table`` (the FROM of ``select``) numbered, with the WHERE's conjuncts that read
    only it applied first (they are moved: the rows they drop never reach a join)."""
    numbered = exp.select(exp.Star(), exp.alias_(row_number(), ROW_COLUMN), copy=False).from_(
        table.copy(), copy=False
    )
    where = select.args.get("where")
    joins = select.args.get("joins") or []
    if where is not None and all(_filter_commutes(j) for j in joins):
        conjuncts = list(where.this.flatten()) if isinstance(where.this, exp.And) else [where.this]
        moved = [c for c in conjuncts if _reads_only(c, alias, alone=not joins)]
        kept = [c for c in conjuncts if not any(c is m for m in moved)]
        if moved:
            numbered.where(*(c.copy() for c in moved), copy=False)
            select.set("where", exp.Where(this=exp.and_(*kept)) if kept else None)
    table.replace(exp.Subquery(this=numbered, alias=exp.TableAlias(this=exp.to_identifier(alias))))


def _filter_commutes(join: exp.Join) -> bool:
    """Whether filtering the FROM's rows before ``join`` equals filtering after it."""
    return join.side.upper() in ("", "LEFT") and join.kind.upper() != "FULL"


def _reads_only(conjunct: exp.Expr, alias: str, *, alone: bool) -> bool:
    """Whether a conjunct reads the columns of the relation ``alias`` only (``alone``: it is
    the level's only relation, so unqualified columns are its own), deterministically."""
    if conjunct.find(exp.Query, exp.Subquery, exp.AggFunc, exp.Window, exp.Rand, exp.Randn):
        return False
    columns = list(conjunct.find_all(exp.Column))
    return bool(columns) and all(
        c.table.lower() == alias.lower() or (alone and not c.table) for c in columns
    )
