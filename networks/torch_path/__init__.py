"""atomspark.networks.torch_path."""
