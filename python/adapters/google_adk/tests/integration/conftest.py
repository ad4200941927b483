"""Fixtures of the integration tests: a shared dexlite, and Worker apps on it or on their own."""

from __future__ import annotations

import pytest
from dex_agents_testing.adapter_suites import worker_app_fixtures
from dex_agents_testing.matrix import MatrixExpectations

from integration.adk_workers import App

dexlite, app, private_app = worker_app_fixtures(App)


@pytest.fixture
def matrix() -> MatrixExpectations:
    # ADK sends the first turn as four contents (the response's two calls in one,
    # their two results in one), then the new user message.
    return MatrixExpectations(messages_after_booking=5)


@pytest.fixture
def make_app() -> type[App]:
    return App
