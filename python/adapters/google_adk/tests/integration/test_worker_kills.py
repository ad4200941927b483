"""Matrix items 5, 6 and 9 with AdkRunner: a Worker SIGKILLed mid-Step.

`dex_agents_testing.matrix`'s kill tests, each on a dexlite of its own
(`private_app`): the Worker child process is killed with its process group while
a single-attempt tool or a model call waits on a gate file, then a fresh Worker
takes over. A target of their own keeps each under about 3 minutes.
"""

from __future__ import annotations

from dex_agents_testing.matrix import (  # the shared tests, collected here
    test_async_durability_default_never_reruns_single_attempt_write,
    test_sigkill_during_run_model_reruns_only_that_model_call,
    test_sigkill_during_single_attempt_tool_records_outcome_unknown,
)

__all__ = [
    "test_async_durability_default_never_reruns_single_attempt_write",
    "test_sigkill_during_run_model_reruns_only_that_model_call",
    "test_sigkill_during_single_attempt_tool_records_outcome_unknown",
]
