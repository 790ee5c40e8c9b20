"""HTTP routes, one module per concept."""
