"""Codec benchmark: dex_agents_contracts vs google.protobuf.json_format.

Prints encode+decode operations per second for AgentToolCall, AgentMessage and
AgentSnapshot (200 messages), for our codec on the generated dataclasses and
for json_format (MessageToJson with field names preserved, then Parse) on the
same values as protobuf messages, and the ratio of the two from the same run.

Usage: bazel run //python/contracts:codec_bench
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import dex_agents_contracts as c
from google.protobuf import descriptor_pb2, descriptor_pool, json_format, message_factory
from google.protobuf.message import Message

NOW = datetime(2026, 11, 1, 12, 0, 0, 123000, tzinfo=UTC)


def tool_call() -> c.AgentToolCall:
    return c.AgentToolCall(
        tool_call_id="call_0001",
        turn_id="turn-7",
        tool_name="lookup_order",
        arguments='{"order_id":42,"include":["items","shipping"]}',
        effect=c.ToolEffect.READ,
        requires_approval=False,
        status=c.ToolCallStatus.SUCCEEDED,
        output='{"status":"shipped","carrier":"DHL","eta":"2026-11-03"}',
        deferral_order=0,
        trace_context="00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        input_choices=[],
        input_allows_free_text=True,
    )


def message(sequence: int) -> c.AgentMessage:
    return c.AgentMessage(
        sequence=sequence,
        turn_id=f"turn-{sequence // 4 + 1}",
        role=c.MessageRole.ASSISTANT,
        text="Your order shipped yesterday and should arrive on Tuesday. " * 3,
        framework_item=(
            '{"kind":"response","parts":[{"part_kind":"text","content":"Your order shipped"}]}'
        ),
        created_at=NOW,
    )


def snapshot() -> c.AgentSnapshot:
    return c.AgentSnapshot(
        state=c.AgentState(
            status=c.AgentStatus.WAITING_FOR_USER_MESSAGE,
            turn_count=50,
            next_message_sequence=201,
            interaction_mode=c.InteractionMode.CHAT,
        ),
        messages=[message(i) for i in range(1, 201)],
        tool_calls=[tool_call()],
        usage=c.AgentUsage(model_calls=100, input_tokens=250_000, output_tokens=40_000),
        queued_message_count=0,
    )


def protobuf_classes(descriptor_set: Path) -> dict[str, type[Message]]:
    files = descriptor_pb2.FileDescriptorSet.FromString(descriptor_set.read_bytes())
    pool = descriptor_pool.DescriptorPool()
    for file in files.file:
        pool.Add(file)
    names = ["AgentToolCall", "AgentMessage", "AgentSnapshot"]
    return {
        n: message_factory.GetMessageClass(pool.FindMessageTypeByName(f"dex.agents.v1.{n}"))
        for n in names
    }


def rate(operation: Callable[[], object], seconds: float = 1.0) -> float:
    """Operations per second, after a warm-up, over at least `seconds`."""
    for _ in range(20):
        operation()
    count, start = 0, time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds:
        for _ in range(10):
            operation()
        count += 10
    return count / elapsed


def round_trip_ours(value: object) -> Callable[[], object]:
    codec_type = type(value)
    return lambda: c.decode(codec_type, c.encode(value))


def round_trip_json_format(proto: Message, cls: type[Message]) -> Callable[[], object]:
    def run() -> object:
        text = json_format.MessageToJson(
            proto,
            preserving_proto_field_name=True,
            always_print_fields_with_no_presence=True,
            indent=None,
        )
        return json_format.Parse(text, cls())

    return run


def main() -> None:
    if len(sys.argv) != 2:
        raise SystemExit("usage: codec_bench.py DESCRIPTOR_SET")
    classes = protobuf_classes(Path(sys.argv[1]))
    cases: list[tuple[str, object]] = [
        ("AgentToolCall", tool_call()),
        ("AgentMessage", message(1)),
        ("AgentSnapshot (200 messages)", snapshot()),
    ]
    print(f"{'value':<30} {'ours ops/s':>12} {'json_format ops/s':>18} {'ratio':>7}")
    for label, value in cases:
        name = label.split(" ")[0]
        text = c.encode(value)
        # The same value as a protobuf message, read from our wire JSON.
        proto = json_format.Parse(text, classes[name](), ignore_unknown_fields=True)

        ours_rate = rate(round_trip_ours(value))
        theirs_rate = rate(round_trip_json_format(proto, classes[name]))
        ratio = ours_rate / theirs_rate
        print(f"{label:<30} {ours_rate:>12,.0f} {theirs_rate:>18,.0f} {ratio:>6.1f}x")


if __name__ == "__main__":
    main()
