"""The session Steps, one module per Step family."""
