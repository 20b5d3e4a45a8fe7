"""The Spark adapter: Java discovery, bundled jars, the PySpark + Iceberg session, and the
adapter that runs lakewide's sqlglot trees on it.

This is the only part of lakewide that talks to PySpark, and it imports it lazily
inside functions so that the rest of the package (and its tests) never start a JVM.
"""
