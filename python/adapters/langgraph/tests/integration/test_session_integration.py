"""The conformance suite (proto/testdata/conformance/cases.json) with LangGraphRunner on
dexlite and real Worker processes, through this adapter's app factory `lg_app.py`."""

from __future__ import annotations

from dex_agents_testing.conformance import conformance_suite

from integration.lg_workers import APP

dexlite, test_conformance = conformance_suite(APP)
