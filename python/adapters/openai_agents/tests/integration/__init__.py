"""Integration tests: OpenAiAgentsRunner on dexlite with real Worker processes."""
