"""What the catalog holds, read without Spark.

Table metadata, offsets, definitions, tags, leases and locks.
"""
