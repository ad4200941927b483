"""The rules below the Steps and RPCs: what a turn, a tool call or a built-in may do."""
