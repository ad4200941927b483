"""The rules of the session RPCs; AgentSessionFlow declares their locks and loads."""
