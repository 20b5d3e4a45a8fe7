"""Runtime layer: Java discovery, bundled jars and the PySpark + Iceberg session.

This is the only part of lakewide that talks to PySpark, and it imports it lazily
inside functions so that the rest of the package (and its tests) never start a JVM.
"""
