"""The project as written, read without a JVM.

Settings, profiles, models, sources, seeds, tests and their config.
"""
