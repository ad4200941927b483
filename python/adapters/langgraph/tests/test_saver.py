"""DexCheckpointSaver against LangGraph's own conformance suite, directly and
through an export/import round trip after every write."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncGenerator, Sequence
from typing import Any

import pytest
from dex_agents_langgraph import CheckpointImportError, DexCheckpointSaver
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import ChannelVersions, Checkpoint, CheckpointMetadata
from langgraph.checkpoint.conformance import checkpointer_test, validate


class RoundTripSaver(DexCheckpointSaver):
    """Exports every thread to JSON text and imports it back after each write, so the
    conformance suite reads only what survived the run state's encoding."""

    def _round_trip(self) -> None:
        threads = list(self._checkpoints) + [key[0] for key in self._writes]
        for thread_id in dict.fromkeys(threads):
            text = json.dumps(self.export_thread(thread_id))
            self.import_thread(thread_id, json.loads(text))

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        saved = super().put(config, checkpoint, metadata, new_versions)
        self._round_trip()
        return saved

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        super().put_writes(config, writes, task_id, task_path)
        self._round_trip()


@checkpointer_test(name="DexCheckpointSaver")
async def plain_saver() -> AsyncGenerator[DexCheckpointSaver, None]:
    yield DexCheckpointSaver()


@checkpointer_test(name="DexCheckpointSaver through export/import")
async def round_trip_saver() -> AsyncGenerator[DexCheckpointSaver, None]:
    yield RoundTripSaver()


@pytest.mark.parametrize("registered", [plain_saver, round_trip_saver], ids=["plain", "round-trip"])
def test_conformance(registered: Any) -> None:
    report = asyncio.run(validate(registered))
    failures = {
        name: result.failures for name, result in report.results.items() if result.passed is False
    }
    assert not failures
    # Every capability a checkpointer must have was detected and run.
    for name in ("put", "put_writes", "get_tuple", "list", "delete_thread"):
        assert report.results[name].passed is True, name
        assert report.results[name].tests_passed > 0, name


@pytest.mark.parametrize(
    ("exported", "problem"),
    [
        ({}, "expected an exported thread of format"),
        ({"format": "dex_agents_langgraph.thread.v1"}, "malformed"),
        (
            {
                "format": "dex_agents_langgraph.thread.v1",
                "checkpoints": [
                    {"ns": "", "id": "1", "parent": None, "checkpoint": "x", "metadata": "y"}
                ],
                "writes": [],
            },
            "malformed",
        ),
    ],
    ids=["no-format", "missing-fields", "bad-value"],
)
def test_a_malformed_export_is_refused_and_leaves_the_thread(
    exported: dict[str, Any], problem: str
) -> None:
    saver = DexCheckpointSaver()
    with pytest.raises(CheckpointImportError, match=problem):
        saver.import_thread("t", exported)
    assert saver.export_thread("t")["checkpoints"] == []
