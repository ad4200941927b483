"""The whole matrix a Step-mode TypeScript runner is held to, for one star import.

An adapter's matrix module does `from remote_matrix_suite import *`, sets
`SIDECAR_PACKAGE` and `FLOW_TYPE_PREFIX` (and `SIDECAR_NODE` for a sidecar that needs
another Node; see remote_matrix.py) and defines its `matrix` fixture; pytest collects the
tests and fixtures below from that module's namespace. Items a runner adds beyond these
(the Vercel AI SDK's structured output) it imports itself.
"""

from __future__ import annotations

from dex_agents_testing.matrix import (
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
    test_ungated_and_gated_tools_of_one_response_run_only_in_their_steps,
)
from remote_matrix import (
    app,
    flow_type_prefix,
    make_app,
    private_app,
    sidecar_package,
    test_cancel_turn_aborts_the_running_model_call_in_node,
    test_sigkill_of_the_sidecar_mid_run_model_reruns_only_that_model_call,
    test_sigkill_of_the_sidecar_mid_single_attempt_tool_records_outcome_unknown,
)

__all__ = [
    "app",
    "flow_type_prefix",
    "make_app",
    "private_app",
    "sidecar_package",
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
    "test_ungated_and_gated_tools_of_one_response_run_only_in_their_steps",
]
