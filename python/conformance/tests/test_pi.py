"""The conformance suite through @dex-agents/pi: `PiRunner` (pi-ai 0.73 models and Pi
tools on the TypeScript Stepwise loop, pi-ai's faux provider scripted) in the Node sidecar
(typescript/adapters/pi/src/testing/conformance_app.ts), plus the sidecar's own SIGKILL
and cancel tests, and that a failed app stops its sidecar."""

from __future__ import annotations

from pathlib import Path

import pytest
from dex_agents_testing.conformance import Traits
from dex_agents_testing.processes import DexliteProcess
from dex_agents_testing.sidecar import Sidecar
from ts_suite import (
    SidecarApp,
    TsAdapter,
    adapter_gap,
    app,
    no_tool_sources,
    private_app,
    test_cancel_turn_aborts_the_running_model_call_in_node,
    test_sigkill_of_the_sidecar_mid_run_model_reruns_only_that_model_call,
    test_sigkill_of_the_sidecar_mid_single_attempt_tool_records_outcome_unknown,
    ts_conformance_suite,
)

__all__ = [
    "app",
    "private_app",
    "test_cancel_turn_aborts_the_running_model_call_in_node",
    "test_sigkill_of_the_sidecar_mid_run_model_reruns_only_that_model_call",
    "test_sigkill_of_the_sidecar_mid_single_attempt_tool_records_outcome_unknown",
]

ADAPTER = TsAdapter(
    "typescript/adapters/pi",
    Traits(
        # The "book" turn as pi-ai sees it replayed: the user message, one assistant
        # message with both calls, one toolResult message per call, the answer; plus
        # the new user message.
        messages_after_booking=6,
        nonconforming={
            "structured_output": adapter_gap(
                "PiRunner",
                "structured_output",
                "pi-agent-core's AgentLoopConfig has no output type (dist/types.d.ts), and "
                "PiRunnerOptions passes none to the Stepwise loop",
            ),
            "handoff_to_billing": (
                "pi-agent-core has no handoff: an Agent runs one model and one tool list "
                "(@mariozechner/pi-agent-core dist/agent.d.ts, dist/types.d.ts "
                "AgentLoopConfig)"
            ),
            **no_tool_sources("PiRunner"),
            "structured_output_with_validator_retry": (
                "an adapter gap (issue 42 item 6), not only pi-ai's: pi-agent-core's "
                "AgentLoopConfig has no output type or validator (dist/types.d.ts), and "
                "PiRunnerOptions passes none to the Stepwise loop "
                "(capabilities.json: structured_output)"
            ),
        },
    ),
)

dexlite, test_conformance = ts_conformance_suite(ADAPTER)


def test_an_app_whose_flow_cannot_be_built_stops_its_sidecar(
    dexlite: DexliteProcess, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    started: list[Sidecar] = []
    start = Sidecar.start

    def recorded(sidecar: Sidecar) -> Sidecar:
        started.append(sidecar)
        return start(sidecar)

    monkeypatch.setattr(Sidecar, "start", recorded)
    broken = tmp_path / "broken_app.py"
    broken.write_text("def build_flow(*args, **kwargs):\n    raise RuntimeError('no flow')\n")
    with pytest.raises(RuntimeError, match="no flow"):
        SidecarApp(dexlite, tmp_path, broken, directory=ADAPTER.directory)
    (sidecar,) = started
    assert sidecar.proc is not None
    assert sidecar.proc.poll() is not None, "the sidecar outlived its app"
