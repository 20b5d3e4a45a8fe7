"""``lakewide docs``: the project as a static site (models, sources, columns and their types,
engines, compiled SQL, the DAG and column-level lineage), with dbt's manifest/catalog names."""
