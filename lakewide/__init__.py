"""lakewide: SQL-first wide tables on Apache Iceberg with Paimon-style merge engines."""

__version__ = "0.1.0"
