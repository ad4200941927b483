"""Worker-side instrumentation for the bench: what each Step is handed, and when.

Installed in the bench's Worker child only. It wraps the SDK's handler of one
Execute invocation (`AsyncWorkerDispatcher._invoke_execute_result`, private in
dex-python-sdk 1.23.0; pull and listening mode both go through it) and writes
one JSON line per Execute attempt:

* `received` / `done`: wall-clock times (`time.time()`, the clock dexlite stamps
  history events with) when the request reached the handler and when its
  response was ready, so the parent can split each Step's commit-to-commit gap
  into dispatch, Worker and commit time;
* `run` / `exec_id`: the call's run and Step execution ID, to join dexlite's
  trace (`traced_dexlite.py`);
* `request_bytes`: the protobuf wire size of the InvokeExecuteMethodRequest as
  dexlite sent it (dexlite sends values inline, never as blob references, so
  this is what the Step loaded), and per Attribute or AttributeMap name the
  number of instances and their wire bytes (`attributes`);
* `messages`: the stored message count from the request's AgentState;
* whatever the Step's runner noted through `note` (the messages handed to the
  model), keyed to the same attempt by a context variable.

The sizes are computed after `done` but before the response leaves, so they
delay the commit a little; each line records that cost (`probe_seconds`).
"""

from __future__ import annotations

import contextvars
import json
import time
from collections.abc import Callable, Coroutine
from typing import IO, Any

from dex._async_worker_dispatcher import AsyncWorkerDispatcher
from dex.dexpb import dex_pb2 as pb
from dex_agents_contracts import AgentState, decode

__all__ = ["install", "note"]

_current: contextvars.ContextVar[dict[str, Any] | None] = contextvars.ContextVar(
    "bench_probe_entry", default=None
)


def note(**fields: object) -> None:
    """Adds `fields` to the log line of the Execute attempt running now (if any)."""
    entry = _current.get()
    if entry is not None:
        entry.update(fields)


def request_sizes(request: pb.InvokeExecuteMethodRequest) -> dict[str, Any]:
    """Wire sizes of the request and of its Attribute instances, grouped by name."""
    groups: dict[str, list[int]] = {}
    messages: int | None = None
    for kv in request.attributes:
        name = kv.key.split("/", 1)[0]
        group = groups.setdefault(name, [0, 0])
        group[0] += 1
        group[1] += kv.ByteSize()
        if kv.key == "AgentState" and kv.value.HasField("obj_value"):
            state = decode(AgentState, kv.value.obj_value.payload)
            messages = state.next_message_sequence - 1
    return {"request_bytes": request.ByteSize(), "attributes": groups, "messages": messages}


def install(log_path: str) -> None:
    """Wraps the SDK's Execute handler so every attempt appends a line to `log_path`."""
    log: IO[str] = open(log_path, "a", encoding="utf-8")  # noqa: SIM115 - lives with the process
    original: Callable[..., Coroutine[Any, Any, pb.InvokeExecuteMethodResponse]] = (
        AsyncWorkerDispatcher._invoke_execute_result
    )

    async def probed(
        self: AsyncWorkerDispatcher,
        request: pb.InvokeExecuteMethodRequest,
        emitter: object,
        is_active: object,
    ) -> pb.InvokeExecuteMethodResponse:
        entry: dict[str, Any] = {
            "flow": request.context.flow_id,
            "step": request.step_type,
            "attempt": request.context.attempt,
            "received": time.time(),
            "run": request.context.run_id,
            "exec_id": request.context.step_execution_id,
        }
        token = _current.set(entry)
        ok = False
        try:
            response = await original(self, request, emitter, is_active)
            ok = True
            return response
        finally:
            entry["done"] = time.time()
            entry["ok"] = ok
            _current.reset(token)
            started = time.perf_counter()
            entry.update(request_sizes(request))
            # Spent before the response leaves: the parent reports what the probe costs.
            entry["probe_seconds"] = time.perf_counter() - started
            log.write(json.dumps(entry) + "\n")
            log.flush()

    setattr(AsyncWorkerDispatcher, "_invoke_execute_result", probed)  # noqa: B010
