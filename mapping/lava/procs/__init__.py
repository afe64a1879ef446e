"""atomspark.mapping.lava.procs."""
