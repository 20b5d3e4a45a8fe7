"""Running models on Spark: the executor, its steps per kind of model, tests around them, watch."""
