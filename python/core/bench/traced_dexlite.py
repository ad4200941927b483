"""`dexlite serve` that timestamps each Step method call's way through the server.

    python traced_dexlite.py TRACE_FILE serve --listen ... --db ...

For the bench's `--trace`: between SIGUSR1 and SIGUSR2 it records, per method
call, when dexlite dispatched it, handed it to a pull stream, received its
result frame, began and ended applying the result, committed, and finished
dispatching what became ready. SIGUSR2 writes the rows to TRACE_FILE as JSON
lines `[time, event, run_id, exec_id, method]` (times are `time.time()`, the
clock the Worker probe uses). It wraps private dexlite functions, which this
repository owns; each wrapper costs a few microseconds.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from typing import Any

from dexlite import _model, _pull
from dexlite._engine import dispatch as _dispatch
from signal_window import serve_with_window

_rows: list[tuple[float, str, str, str, str]] = []
_active = threading.Event()
_tasks: dict[str, tuple[str, str, str]] = {}  # pull task ID -> (run_id, exec_id, method)
_applying = threading.local()  # the call whose result this thread is applying


def _record(event: str, run_id: str, exec_id: str, method: str) -> None:
    if _active.is_set():
        _rows.append((time.time(), event, run_id, exec_id, method))  # list.append is atomic


def _install() -> None:
    dispatcher, hub = _dispatch.Dispatcher, _pull.PullHub
    dispatch, finish, pump = dispatcher._dispatch, _dispatch._finish_call, dispatcher.pump
    assign, on_frame = hub._assign, hub._on_frame

    def traced_dispatch(self: Any, step: Any) -> None:
        method = "wait_for" if step["state"] == _model.WAITFOR_RUNNING else "execute"
        _record("dispatched", step["run_id"], step["exec_id"], method)
        dispatch(self, step)

    def traced_assign(
        self: Any, spec: Any, handle: Any, excluded: Any, deadline: float | None
    ) -> Any:
        assigned = assign(self, spec, handle, excluded, deadline)
        if isinstance(assigned, tuple) and spec.kind != "rpc":
            context = spec.request.context
            call = (context.run_id, context.step_execution_id, spec.kind)
            _tasks[assigned[1].task_id] = call
            _record("assigned", *call)
        return assigned

    def traced_on_frame(self: Any, stream: Any, frame: Any) -> None:
        kind = frame.WhichOneof("output")
        output = getattr(frame, kind) if kind in ("wait_for", "execute") else None
        if output is not None and output.WhichOneof("output") == "result":
            call = _tasks.pop(frame.task_id, None)
            if call is not None:
                _record("result", *call)
        on_frame(self, stream, frame)

    def traced_finish(state: Any, conn: Any, key: Any, inflight: Any, outcome: Any) -> None:
        call = (key[0], key[1], inflight.method)
        _record("applying", *call)
        _applying.call = call
        try:
            finish(state, conn, key, inflight, outcome)
        finally:
            _record("applied", *call)

    def traced_pump(self: Any) -> None:
        call = getattr(_applying, "call", None)
        _applying.call = None
        if call is not None:
            _record("committed", *call)  # EngineState.tx pumps right after its commit
        pump(self)
        if call is not None:
            _record("pumped", *call)

    # Before the server is built: the Engine binds Dispatcher.pump into its state.
    dispatcher._dispatch = traced_dispatch  # type: ignore[method-assign]
    _dispatch._finish_call = traced_finish
    dispatcher.pump = traced_pump  # type: ignore[method-assign]
    hub._assign = traced_assign  # type: ignore[method-assign]
    hub._on_frame = traced_on_frame  # type: ignore[method-assign]


def _write(path: str) -> None:
    _active.clear()
    with open(path + ".tmp", "w", encoding="utf-8") as out:
        for row in list(_rows):
            out.write(json.dumps(row) + "\n")
    os.replace(path + ".tmp", path)


def main(argv: list[str]) -> int:
    _install()
    return serve_with_window(argv, opened=_active.set, closed=_write)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
