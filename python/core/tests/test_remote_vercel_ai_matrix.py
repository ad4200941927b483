"""The design's matrix through the real path for a TypeScript runner: dexlite, a Python
Worker child whose session Flow runs on a `RemoteRunner`, and the Node sidecar serving
`VercelAiRunner` (@dex-agents/vercel-ai, `ai` 7 with a scripted MockLanguageModelV4,
typescript/adapters/vercel-ai/src/testing/matrix_sidecar.ts). The matrix's kills
SIGKILL the Python Worker; the sidecar tests of remote_matrix.py SIGKILL the sidecar."""

from __future__ import annotations

from pathlib import Path

import pytest
from dex_agents_testing.matrix import (
    MatrixExpectations,
    test_approval_deadline_rejects_the_call,
    test_approved_write_survives_worker_restart_and_runs_once,
    test_async_durability_default_never_reruns_single_attempt_write,
    test_failed_turn_after_write_leaves_note_and_write_is_not_repeated,
    test_message_sent_during_a_turn_is_queued,
    test_parallel_tool_calls_run_as_parallel_steps,
    test_read_tool_turn_has_step_shape_and_replays_history,
    test_rejected_write_never_runs_and_the_model_sees_why,
    test_sigkill_during_run_model_reruns_only_that_model_call,
    test_sigkill_during_single_attempt_tool_records_outcome_unknown,
    test_structured_output_with_a_validator_retry_is_two_run_model_steps,
    test_ungated_and_gated_tools_of_one_response_run_only_in_their_steps,
)
from remote_matrix import (
    app,
    dexlite,
    make_app,
    private_app,
    test_cancel_turn_aborts_the_running_model_call_in_node,
    test_sigkill_of_the_sidecar_mid_run_model_reruns_only_that_model_call,
    test_sigkill_of_the_sidecar_mid_single_attempt_tool_records_outcome_unknown,
)
from remote_sidecar import build_package

__all__ = [
    "app",
    "dexlite",
    "make_app",
    "private_app",
    "test_approval_deadline_rejects_the_call",
    "test_approved_write_survives_worker_restart_and_runs_once",
    "test_async_durability_default_never_reruns_single_attempt_write",
    "test_cancel_turn_aborts_the_running_model_call_in_node",
    "test_failed_turn_after_write_leaves_note_and_write_is_not_repeated",
    "test_message_sent_during_a_turn_is_queued",
    "test_parallel_tool_calls_run_as_parallel_steps",
    "test_read_tool_turn_has_step_shape_and_replays_history",
    "test_rejected_write_never_runs_and_the_model_sees_why",
    "test_sigkill_during_run_model_reruns_only_that_model_call",
    "test_sigkill_during_single_attempt_tool_records_outcome_unknown",
    "test_sigkill_of_the_sidecar_mid_run_model_reruns_only_that_model_call",
    "test_sigkill_of_the_sidecar_mid_single_attempt_tool_records_outcome_unknown",
    "test_structured_output_with_a_validator_retry_is_two_run_model_steps",
    "test_ungated_and_gated_tools_of_one_response_run_only_in_their_steps",
]


@pytest.fixture(scope="module")
def sidecar_package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("ts")
    return build_package(
        work, "typescript/adapters/vercel-ai", ["typescript/contracts", "typescript/core"]
    )


@pytest.fixture
def matrix() -> MatrixExpectations:
    # The "book" turn as the AI SDK stores it: the assistant message with both calls,
    # one tool message with both results, the answer; plus the user message on each side.
    # Structured output is Output.object's JSON text, a retry prompt a user message.
    return MatrixExpectations(messages_after_booking=5, structured_output_as_text=True)


@pytest.fixture
def flow_type_prefix() -> str:
    return "Vercel"
