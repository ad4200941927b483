"""The design document's matrix with AdkRunner on dexlite and real Worker processes.

The tests are `dex_agents_testing.matrix`'s, run against `adk_app.py` (a ScriptedLlm
answering from the request's contents by the matrix's prompts) on
Worker child processes. Items 5, 6 and 9 (Worker SIGKILLs) are in
test_worker_kills.py, the issue's other cases in test_adapter_cases.py.
"""

from __future__ import annotations

from dex_agents_testing.matrix import (  # the shared tests, collected here
    test_approval_deadline_rejects_the_call,
    test_approved_write_survives_worker_restart_and_runs_once,
    test_failed_turn_after_write_leaves_note_and_write_is_not_repeated,
    test_message_sent_during_a_turn_is_queued,
    test_parallel_tool_calls_run_as_parallel_steps,
    test_read_tool_turn_has_step_shape_and_replays_history,
    test_rejected_write_never_runs_and_the_model_sees_why,
    test_ungated_and_gated_tools_of_one_response_run_only_in_their_steps,
)

__all__ = [
    "test_approval_deadline_rejects_the_call",
    "test_approved_write_survives_worker_restart_and_runs_once",
    "test_failed_turn_after_write_leaves_note_and_write_is_not_repeated",
    "test_message_sent_during_a_turn_is_queued",
    "test_parallel_tool_calls_run_as_parallel_steps",
    "test_read_tool_turn_has_step_shape_and_replays_history",
    "test_rejected_write_never_runs_and_the_model_sees_why",
    "test_ungated_and_gated_tools_of_one_response_run_only_in_their_steps",
]
