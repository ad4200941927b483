"""The conformance suite's cases that SIGKILL a Worker mid-Step (items 5, 6 and 9) with
ClaudeAgentRunner, each on a dexlite of its own. In item 6 the retried RunModel repeats
the whole turn so far, its inline read included (at least once, as documented)."""

from __future__ import annotations

from dex_agents_testing.conformance import conformance_suite

from integration.claude_workers import APP

dexlite, test_conformance = conformance_suite(APP, only=lambda case: case.own_dexlite)
