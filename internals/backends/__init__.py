"""Hook backends: read pooled activations at sites during one forward pass."""
