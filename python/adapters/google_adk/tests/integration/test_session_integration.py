"""The conformance suite (proto/testdata/conformance/cases.json) with AdkRunner on dexlite
and real Worker processes, through this adapter's app factory `adk_app.py`.

The cases that SIGKILL Workers (on a dexlite of their own) are test_worker_kills.py's,
this adapter's own cases test_adapter_cases.py's: targets of their own keep each
under about 3 minutes.
"""

from __future__ import annotations

from dex_agents_testing.conformance import conformance_suite

from integration.adk_workers import APP

dexlite, test_conformance = conformance_suite(APP, only=lambda case: not case.own_dexlite)
