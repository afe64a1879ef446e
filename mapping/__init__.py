"""atomspark.mapping."""
