"""What a model is, as the compiler needs it: the analyzed wide model (columns, keys, source
branches from its UNION ALL, owned columns), stored versions, record order, temporal and
delta joins checked, its Iceberg table layout, and the analyzed snapshot model.

Imports ``aggregates`` and ``trees`` only (and ``lakewide.project`` below the compiler)."""
