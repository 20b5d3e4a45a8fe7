"""What several commands share: the console, options, output modes, progress, the Spark
session, and the services behind run, seed and test. No command module imports another."""
