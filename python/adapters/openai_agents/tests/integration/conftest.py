"""Fixtures of the integration tests: a shared dexlite, and Worker apps on it or on their own."""

from __future__ import annotations

from dex_agents_testing.adapter_suites import worker_app_fixtures

from integration.oai_workers import App

dexlite, app, private_app = worker_app_fixtures(App)
