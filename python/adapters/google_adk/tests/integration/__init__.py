"""Integration tests: AdkRunner on dexlite with real Worker processes."""
