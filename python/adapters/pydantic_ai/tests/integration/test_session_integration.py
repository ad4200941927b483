"""The design document's matrix 1-11 with PydanticAiRunner on dexlite and real Worker processes.

The tests are `dex_agents_testing.matrix`'s, run against `pai_app.py` (its scripted
model follows the matrix's prompts) on Worker child processes that the kill
tests SIGKILL; Step shapes come from the Flow's history.
"""

from __future__ import annotations

from dex_agents_testing.matrix import (  # the shared tests, collected here
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

__all__ = [
    "test_approval_deadline_rejects_the_call",
    "test_approved_write_survives_worker_restart_and_runs_once",
    "test_async_durability_default_never_reruns_single_attempt_write",
    "test_failed_turn_after_write_leaves_note_and_write_is_not_repeated",
    "test_message_sent_during_a_turn_is_queued",
    "test_parallel_tool_calls_run_as_parallel_steps",
    "test_read_tool_turn_has_step_shape_and_replays_history",
    "test_rejected_write_never_runs_and_the_model_sees_why",
    "test_sigkill_during_run_model_reruns_only_that_model_call",
    "test_sigkill_during_single_attempt_tool_records_outcome_unknown",
    "test_structured_output_with_a_validator_retry_is_two_run_model_steps",
    "test_ungated_and_gated_tools_of_one_response_run_only_in_their_steps",
]
