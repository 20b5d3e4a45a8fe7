"""What commands do together: the global options and model selection (``context``), the Spark
start, the services behind ``run``/``build``/``retry`` (models, tags, restate), seeds, data and
unit tests, and ``run --watch``. Imports ``commands.output``, never a command."""
