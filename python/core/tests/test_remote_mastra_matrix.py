"""The design's matrix through the real path for a TypeScript runner: dexlite, a Python
Worker child whose session Flow runs on a `RemoteRunner`, and the Node sidecar serving
`MastraRunner` (@dex-agents/mastra: a Mastra Agent on the TypeScript Stepwise loop, its
model a scripted MockLanguageModelV4, typescript/adapters/mastra/src/testing/
matrix_sidecar.ts) under the pinned Node 22, which @mastra/core needs. The matrix's kills
SIGKILL the Python Worker; the sidecar tests of remote_matrix.py SIGKILL the sidecar."""

from __future__ import annotations

import pytest
from dex_agents_testing.matrix import (
    MatrixExpectations,
    test_structured_output_with_a_validator_retry_is_two_run_model_steps,
)
from remote_matrix_suite import *  # noqa: F403  (the matrix pytest collects here)
from remote_sidecar import pinned_node

__all__ = ["test_structured_output_with_a_validator_retry_is_two_run_model_steps"]

SIDECAR_PACKAGE = "typescript/adapters/mastra"
FLOW_TYPE_PREFIX = "Mastra"
SIDECAR_NODE = pinned_node()


@pytest.fixture
def matrix() -> MatrixExpectations:
    # The "book" turn as Mastra's model sees it replayed: the user message, one assistant
    # message with both calls (Stepwise joins a response's stored calls), one tool message
    # with both results (consecutive results join, as the AI SDK writes them), the answer;
    # plus the new user message. Structured output (Mastra's `structuredOutput`) is the
    # answer's JSON text, a retry prompt a user message.
    return MatrixExpectations(messages_after_booking=5, structured_output_as_text=True)
