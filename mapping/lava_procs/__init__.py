"""atomspark.mapping.lava_procs."""
