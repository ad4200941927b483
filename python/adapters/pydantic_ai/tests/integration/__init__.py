"""Integration tests on dexlite with Worker child processes.

A package, so that the tests import their shared helper (`pai_workers`) the same
way under pytest and mypy: pytest puts `tests/` on `sys.path`, as mypy's path does.
"""
