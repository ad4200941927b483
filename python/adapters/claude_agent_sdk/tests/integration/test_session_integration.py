"""The conformance suite (proto/testdata/conformance/cases.json) with ClaudeAgentRunner on
dexlite and real Worker processes, through this adapter's app factory `claude_app.py`.

The harness runs a turn's reads inside RunModel (the cases' `harness`
expectations). The cases that SIGKILL Workers (on a dexlite of their own) are
test_worker_kills.py's: a target of their own keeps each under about 3 minutes.
"""

from __future__ import annotations

from dex_agents_testing.conformance import conformance_suite

from integration.claude_workers import APP

dexlite, test_conformance = conformance_suite(APP, only=lambda case: not case.own_dexlite)
