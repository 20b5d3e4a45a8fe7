"""Running the project on Spark, by what it runs (each folder imports only the folders below it):

* ``preview``: ``lakewide plan``, what a run would do, without a JVM;
* ``maintenance``: ``lakewide maintain``, publishing a branch, ``run --watch``;
* ``testing``: data tests and unit tests around the models;
* ``models``: the executor and its runs of models and seeds;
* ``schema``: a key table's schema changes at run time.
"""
