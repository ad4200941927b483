"""Integration tests: ClaudeAgentRunner sessions on dexlite with Worker child processes."""
