"""The design document's matrix with ClaudeAgentRunner on dexlite and real Worker processes.

The items with a read have the whole-turn harness's shapes
(`dex_agents_testing.harness_matrix`, which the TypeScript harness's matrix runs too);
the items that only involve writes are `dex_agents_testing.matrix`'s, collected here
unchanged. The SIGKILL items are in test_worker_kills.py.
"""

from __future__ import annotations

from dex_agents_testing.harness_matrix import (  # the shared tests, collected here
    test_approved_write_survives_worker_restart_and_runs_once,
    test_failed_turn_after_write_leaves_note_and_write_is_not_repeated,
    test_message_sent_during_a_turn_is_queued,
    test_parallel_reads_run_inline,
    test_read_tool_turn_is_one_run_model_and_replays_history,
    test_rejected_write_never_runs_and_the_model_sees_why,
)
from dex_agents_testing.matrix import test_approval_deadline_rejects_the_call

__all__ = [
    "test_approval_deadline_rejects_the_call",
    "test_approved_write_survives_worker_restart_and_runs_once",
    "test_failed_turn_after_write_leaves_note_and_write_is_not_repeated",
    "test_message_sent_during_a_turn_is_queued",
    "test_parallel_reads_run_inline",
    "test_read_tool_turn_is_one_run_model_and_replays_history",
    "test_rejected_write_never_runs_and_the_model_sees_why",
]
