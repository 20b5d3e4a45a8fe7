"""What lakewide writes for people and tools to read.

manifest.json, run_results.json, the compiled files and the docs site of a project.
"""
