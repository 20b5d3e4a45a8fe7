"""The subcommands of ``lakewide``, one module each; ``lakewide.cli`` registers them on its group.

``context`` holds what every command gets (console, global options, model selection) and
``session`` the one SparkSession of the commands that need Spark.
"""
