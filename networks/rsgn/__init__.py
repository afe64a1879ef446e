"""atomspark.networks.rsgn."""
