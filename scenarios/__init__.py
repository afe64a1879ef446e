"""atomspark.scenarios."""
