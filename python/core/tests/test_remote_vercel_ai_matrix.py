"""The design's matrix through the real path for a TypeScript runner: dexlite, a Python
Worker child whose session Flow runs on a `RemoteRunner`, and the Node sidecar serving
`VercelAiRunner` (@dex-agents/vercel-ai, `ai` 7 with a scripted MockLanguageModelV4,
typescript/adapters/vercel-ai/src/testing/matrix_sidecar.ts). The matrix's kills
SIGKILL the Python Worker; the sidecar tests of remote_matrix.py SIGKILL the sidecar."""

from __future__ import annotations

import pytest
from dex_agents_testing.matrix import (
    MatrixExpectations,
    test_structured_output_with_a_validator_retry_is_two_run_model_steps,
)
from remote_matrix_suite import *  # noqa: F403  (the matrix pytest collects here)

__all__ = ["test_structured_output_with_a_validator_retry_is_two_run_model_steps"]

SIDECAR_PACKAGE = "typescript/adapters/vercel-ai"
FLOW_TYPE_PREFIX = "Vercel"


@pytest.fixture
def matrix() -> MatrixExpectations:
    # The "book" turn as the AI SDK stores it: the assistant message with both calls,
    # one tool message with both results, the answer; plus the user message on each side.
    # Structured output is Output.object's JSON text, a retry prompt a user message.
    return MatrixExpectations(messages_after_booking=5, structured_output_as_text=True)
