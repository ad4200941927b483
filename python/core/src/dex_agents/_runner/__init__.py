"""What `dex_agents.runner` re-exports, one module per concern; import from there."""
