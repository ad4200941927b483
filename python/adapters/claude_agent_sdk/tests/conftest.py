"""The package's tests import their support module as `support` (tests/ on sys.path)."""
