"""Test helpers shared by the dexlite integration tests."""
