"""The design's matrix through the real path for a TypeScript runner: dexlite, a Python
Worker child whose session Flow runs on a `RemoteRunner`, and the Node sidecar serving
`OpenAiAgentsRunner` (@dex-agents/openai-agents, @openai/agents 0.20 with a scripted
Model, typescript/adapters/openai-agents/src/testing/matrix_sidecar.ts). The matrix's
kills SIGKILL the Python Worker; the sidecar tests of remote_matrix.py SIGKILL the sidecar."""

from __future__ import annotations

import pytest
from dex_agents_testing.matrix import MatrixExpectations
from remote_matrix_suite import *  # noqa: F403  (the matrix pytest collects here)

SIDECAR_PACKAGE = "typescript/adapters/openai-agents"
FLOW_TYPE_PREFIX = "OpenAiAgents"


@pytest.fixture
def matrix() -> MatrixExpectations:
    # The "book" turn as the SDK stores it: one item per function call and per result,
    # the answer; plus the user message on each side.
    return MatrixExpectations(messages_after_booking=7)
