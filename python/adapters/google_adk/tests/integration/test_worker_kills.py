"""The conformance suite's cases that SIGKILL a Worker mid-Step (items 5, 6 and 9) with
AdkRunner, each on a dexlite of its own; a target of their own keeps each target
under about 3 minutes."""

from __future__ import annotations

from dex_agents_testing.conformance import conformance_suite

from integration.adk_workers import APP

dexlite, test_conformance = conformance_suite(APP, only=lambda case: case.own_dexlite)
