"""Fixtures of the integration tests: a shared dexlite, and Worker apps on it or on their own."""

from __future__ import annotations

import pytest
from dex_agents_testing.adapter_suites import worker_app_fixtures
from dex_agents_testing.matrix import MatrixExpectations

from integration.claude_workers import App

dexlite, app, private_app = worker_app_fixtures(App)


@pytest.fixture
def matrix() -> MatrixExpectations:
    # Not used by the harness's own versions of the matrix (test_session_integration.py).
    return MatrixExpectations(messages_after_booking=0)


@pytest.fixture
def make_app() -> type[App]:
    return App
