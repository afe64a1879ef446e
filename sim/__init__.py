"""atomspark.sim."""
