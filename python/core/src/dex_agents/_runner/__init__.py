"""The runner seam, one module per concern.

`dex_agents.runner` re-exports what an adapter author needs; the core and this
repository's adapters import the rest from the modules here.
"""
