"""atomspark.networks.vn."""
