"""Integration tests: LangGraphRunner on dexlite with Worker child processes."""
