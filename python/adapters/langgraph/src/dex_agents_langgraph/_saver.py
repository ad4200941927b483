"""`DexCheckpointSaver`: LangGraph checkpoints kept in memory for one Step at a time.

Between Steps a turn's graph checkpoint lives in the session's
FrameworkRunState, not in a database: the runner imports a thread's
checkpoints before it resumes the graph and exports them when the Step ends
(`export_thread` / `import_thread`, JSON-ready). In between this is an ordinary
`BaseCheckpointSaver` (the sync and async methods), so the graph can use it
like any other; one instance serves every session of a Worker, keyed by
thread ID.
"""

from __future__ import annotations

import base64
import threading
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from dex_agents.runner import RunStateError
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    WRITES_IDX_MAP,
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    get_checkpoint_id,
)

__all__ = ["CheckpointImportError", "DexCheckpointSaver"]

_EXPORT_FORMAT = "dex_agents_langgraph.thread.v1"

Typed = tuple[str, bytes]
"""A value as the serializer typed it: its type tag and its bytes."""


class CheckpointImportError(RunStateError):
    """An exported thread that this saver cannot read back: the run state holding it
    is unreadable, so RunModel ends the turn rather than retrying."""


@dataclass(frozen=True)
class _Saved:
    checkpoint: Typed
    metadata: Typed
    parent_id: str | None


@dataclass(frozen=True)
class _Write:
    task_id: str
    channel: str
    value: Typed
    task_path: str


_WriteKey = tuple[str, int]
"""(task ID, index of the write within the task; special channels use negative indices)."""


class DexCheckpointSaver(BaseCheckpointSaver[int]):
    """An in-memory checkpoint saver whose threads can be exported as JSON."""

    def __init__(self) -> None:
        super().__init__()
        self._lock = threading.Lock()
        # thread -> namespace -> checkpoint ID -> checkpoint
        self._checkpoints: dict[str, dict[str, dict[str, _Saved]]] = {}
        # (thread, namespace, checkpoint ID) -> writes
        self._writes: dict[tuple[str, str, str], dict[_WriteKey, _Write]] = {}

    # --- reading ----------------------------------------------------------------------

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        thread_id, namespace = _thread_and_namespace(config)
        checkpoint_id = get_checkpoint_id(config)
        with self._lock:
            saved = self._checkpoints.get(thread_id, {}).get(namespace, {})
            if not saved:
                return None
            if checkpoint_id is None:
                checkpoint_id = max(saved)  # IDs sort by creation time
            entry = saved.get(checkpoint_id)
            if entry is None:
                return None
            writes = list(self._writes.get((thread_id, namespace, checkpoint_id), {}).values())
        return self._tuple(thread_id, namespace, checkpoint_id, entry, writes)

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        wanted_thread = _configurable(config).get("thread_id") if config else None
        wanted_namespace = _configurable(config).get("checkpoint_ns") if config else None
        wanted_id = get_checkpoint_id(config) if config else None
        before_id = get_checkpoint_id(before) if before else None
        with self._lock:
            found: list[tuple[str, str, str, _Saved, list[_Write]]] = []
            for thread_id, namespaces in self._checkpoints.items():
                if wanted_thread is not None and thread_id != wanted_thread:
                    continue
                for namespace, saved in namespaces.items():
                    if wanted_namespace is not None and namespace != wanted_namespace:
                        continue
                    for checkpoint_id in sorted(saved, reverse=True):
                        if wanted_id is not None and checkpoint_id != wanted_id:
                            continue
                        if before_id is not None and checkpoint_id >= before_id:
                            continue
                        stored = self._writes.get((thread_id, namespace, checkpoint_id), {})
                        found.append(
                            (
                                thread_id,
                                namespace,
                                checkpoint_id,
                                saved[checkpoint_id],
                                [*stored.values()],
                            )
                        )
        count = 0
        for thread_id, namespace, checkpoint_id, entry, writes in found:
            item = self._tuple(thread_id, namespace, checkpoint_id, entry, writes)
            if filter and not all(item.metadata.get(k) == v for k, v in filter.items()):
                continue
            if limit is not None and count >= limit:
                return
            count += 1
            yield item

    # --- writing ----------------------------------------------------------------------

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        del new_versions  # the whole checkpoint is kept, channel values included
        thread_id, namespace = _thread_and_namespace(config)
        entry = _Saved(
            checkpoint=self.serde.dumps_typed(checkpoint),
            metadata=self.serde.dumps_typed(metadata),
            parent_id=get_checkpoint_id(config),
        )
        with self._lock:
            saved = self._checkpoints.setdefault(thread_id, {}).setdefault(namespace, {})
            saved[checkpoint["id"]] = entry
        return _config(thread_id, namespace, checkpoint["id"])

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        thread_id, namespace = _thread_and_namespace(config)
        checkpoint_id = get_checkpoint_id(config)
        if checkpoint_id is None:
            raise ValueError("put_writes needs a config that names a checkpoint_id")
        with self._lock:
            stored = self._writes.setdefault((thread_id, namespace, checkpoint_id), {})
            for index, (channel, value) in enumerate(writes):
                key = (task_id, WRITES_IDX_MAP.get(channel, index))
                # A regular write is kept once; special channels (errors, interrupts) update.
                if key[1] >= 0 and key in stored:
                    continue
                stored[key] = _Write(task_id, channel, self.serde.dumps_typed(value), task_path)

    def delete_thread(self, thread_id: str) -> None:
        with self._lock:
            self._checkpoints.pop(thread_id, None)
            for key in [k for k in self._writes if k[0] == thread_id]:
                del self._writes[key]

    # --- the async twins: nothing here blocks ----------------------------------------

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return self.get_tuple(config)

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        for item in self.list(config, filter=filter, before=before, limit=limit):
            yield item

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        return self.put(config, checkpoint, metadata, new_versions)

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        self.put_writes(config, writes, task_id, task_path)

    async def adelete_thread(self, thread_id: str) -> None:
        self.delete_thread(thread_id)

    # --- moving a thread in and out of the session's run state -----------------------

    def export_thread(self, thread_id: str, *, latest_only: bool = False) -> dict[str, Any]:
        """A thread's checkpoints and writes, JSON-ready (the serializer's bytes in base64).

        `latest_only` keeps each namespace's newest checkpoint and its writes, all a
        resume needs: every checkpoint holds the whole state, so the full history
        grows with the square of a turn's length.
        """
        with self._lock:
            namespaces = self._checkpoints.get(thread_id, {})
            kept = {
                namespace: sorted(saved.items())[-1:] if latest_only else sorted(saved.items())
                for namespace, saved in namespaces.items()
            }
            checkpoints = [
                {
                    "ns": namespace,
                    "id": checkpoint_id,
                    "parent": entry.parent_id,
                    "checkpoint": _typed_json(entry.checkpoint),
                    "metadata": _typed_json(entry.metadata),
                }
                for namespace, entries in kept.items()
                for checkpoint_id, entry in entries
            ]
            exported = {(ns, cid) for ns, entries in kept.items() for cid, _ in entries}
            writes = [
                {
                    "ns": namespace,
                    "checkpoint": checkpoint_id,
                    "task": write.task_id,
                    "index": index,
                    "channel": write.channel,
                    "value": _typed_json(write.value),
                    "path": write.task_path,
                }
                for (thread, namespace, checkpoint_id), stored in self._writes.items()
                if thread == thread_id and (namespace, checkpoint_id) in exported
                for (_, index), write in stored.items()
            ]
        return {"format": _EXPORT_FORMAT, "checkpoints": checkpoints, "writes": writes}

    def import_thread(self, thread_id: str, exported: Mapping[str, Any]) -> None:
        """Replaces a thread with one `export_thread` wrote (possibly in another process)."""
        if not isinstance(exported, Mapping) or exported.get("format") != _EXPORT_FORMAT:
            raise CheckpointImportError(f"expected an exported thread of format {_EXPORT_FORMAT!r}")
        try:
            checkpoints: dict[str, dict[str, _Saved]] = {}
            for item in exported["checkpoints"]:
                checkpoints.setdefault(str(item["ns"]), {})[str(item["id"])] = _Saved(
                    checkpoint=_typed_value(item["checkpoint"]),
                    metadata=_typed_value(item["metadata"]),
                    parent_id=None if item["parent"] is None else str(item["parent"]),
                )
            writes: dict[tuple[str, str, str], dict[_WriteKey, _Write]] = {}
            for item in exported["writes"]:
                key = (thread_id, str(item["ns"]), str(item["checkpoint"]))
                writes.setdefault(key, {})[(str(item["task"]), int(item["index"]))] = _Write(
                    str(item["task"]),
                    str(item["channel"]),
                    _typed_value(item["value"]),
                    str(item["path"]),
                )
        except (KeyError, TypeError, ValueError) as error:
            raise CheckpointImportError(f"the exported thread is malformed: {error!r}") from error
        self.delete_thread(thread_id)
        with self._lock:
            self._checkpoints[thread_id] = checkpoints
            self._writes.update(writes)

    # --- helpers ----------------------------------------------------------------------

    def _tuple(
        self,
        thread_id: str,
        namespace: str,
        checkpoint_id: str,
        entry: _Saved,
        writes: Sequence[_Write],
    ) -> CheckpointTuple:
        return CheckpointTuple(
            config=_config(thread_id, namespace, checkpoint_id),
            checkpoint=self.serde.loads_typed(entry.checkpoint),
            metadata=self.serde.loads_typed(entry.metadata),
            parent_config=(
                _config(thread_id, namespace, entry.parent_id) if entry.parent_id else None
            ),
            pending_writes=[
                (write.task_id, write.channel, self.serde.loads_typed(write.value))
                for write in writes
            ],
        )


def _configurable(config: RunnableConfig | None) -> Mapping[str, Any]:
    return (config or {}).get("configurable") or {}


def _thread_and_namespace(config: RunnableConfig) -> tuple[str, str]:
    configurable = _configurable(config)
    thread_id = configurable.get("thread_id")
    if thread_id is None:
        raise ValueError("a LangGraph config for DexCheckpointSaver needs configurable.thread_id")
    return str(thread_id), str(configurable.get("checkpoint_ns", ""))


def _config(thread_id: str, namespace: str, checkpoint_id: str) -> RunnableConfig:
    return {
        "configurable": {
            "thread_id": thread_id,
            "checkpoint_ns": namespace,
            "checkpoint_id": checkpoint_id,
        }
    }


def _typed_json(value: Typed) -> list[str]:
    return [value[0], base64.b64encode(value[1]).decode("ascii")]


def _typed_value(item: object) -> Typed:
    if not isinstance(item, list) or len(item) != 2 or not all(isinstance(p, str) for p in item):
        raise ValueError(f"expected [type, base64] but got {item!r:.80}")
    return item[0], base64.b64decode(item[1], validate=True)
