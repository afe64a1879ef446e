"""atomspark.networks."""
