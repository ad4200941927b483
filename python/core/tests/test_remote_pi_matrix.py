"""The design's matrix through the real path for a TypeScript runner: dexlite, a Python
Worker child whose session Flow runs on a `RemoteRunner`, and the Node sidecar serving
`PiRunner` (@dex-agents/pi: pi-ai 0.73 models and Pi tools on the TypeScript Stepwise
loop, with pi-ai's faux provider scripted in
typescript/adapters/pi/src/testing/matrix_sidecar.ts). The matrix's kills
SIGKILL the Python Worker; the sidecar tests of remote_matrix.py SIGKILL the Node sidecar."""

from __future__ import annotations

import pytest
from dex_agents_testing.matrix import MatrixExpectations
from remote_matrix_suite import *  # noqa: F403  (the matrix pytest collects here)

SIDECAR_PACKAGE = "typescript/adapters/pi"
FLOW_TYPE_PREFIX = "Pi"


@pytest.fixture
def matrix() -> MatrixExpectations:
    # The "book" turn as pi-ai sees it replayed: the user message, one assistant message
    # with both calls (Stepwise joins a response's stored calls), one toolResult message
    # per call, the answer; plus the new user message.
    return MatrixExpectations(messages_after_booking=6)
