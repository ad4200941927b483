"""Test support for dex-agents: dexlite and Worker processes, scripted runs, Step shapes."""

from __future__ import annotations

from dex_agents_testing.clock import FileClock
from dex_agents_testing.events import events_until
from dex_agents_testing.history import (
    assert_step_shape,
    executed_steps,
    fetch_history,
    step_types,
    turn_shapes,
)
from dex_agents_testing.in_process import dexlite_or, worker_in_thread
from dex_agents_testing.processes import (
    DexliteProcess,
    WorkerProcess,
    child_env,
    free_port,
    wait_until,
)
from dex_agents_testing.runlog import RunLog
from dex_agents_testing.scenario import FactoryScenario, Scenario, load_flow
from dex_agents_testing.scripted import (
    ModelReply,
    ScriptedPoll,
    ScriptedQuestion,
    ScriptedRunner,
    ScriptedTask,
    ScriptedTool,
    ScriptedToolCall,
    TaskScriptedRunner,
)
from dex_agents_testing.worker_apps import WorkerApp, load_app

__all__ = [  # noqa: RUF022 - grouped by comment headers (docs/style.md)
    # processes
    "DexliteProcess",
    "WorkerProcess",
    "child_env",
    "free_port",
    "wait_until",
    # an adapter's test application on a Worker child process
    "WorkerApp",
    "load_app",
    # in-process helpers for examples and benchmarks
    "dexlite_or",
    "worker_in_thread",
    # scripted sessions: the runners, their scripts, the scenario a Worker loads
    "ScriptedRunner",
    "TaskScriptedRunner",
    "ModelReply",
    "ScriptedToolCall",
    "ScriptedTool",
    "ScriptedQuestion",
    "ScriptedTask",
    "ScriptedPoll",
    "RunLog",
    "Scenario",
    "FactoryScenario",
    "load_flow",
    # the session clock of Worker processes, moved by the test
    "FileClock",
    # history and events
    "assert_step_shape",
    "events_until",
    "executed_steps",
    "fetch_history",
    "step_types",
    "turn_shapes",
]
