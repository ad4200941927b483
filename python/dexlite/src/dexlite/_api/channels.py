"""Channel messages and attributes through the raw client API."""

from __future__ import annotations

from dex.dexpb import dex_pb2 as pb
from google.protobuf import empty_pb2  # type: ignore[import-untyped,unused-ignore]

from dexlite import _errors, _snapshot
from dexlite._engine import rows, waits, writes
from dexlite._model import check_identifier, require_value

from .base import OpsBase

_EMPTY = empty_pb2.Empty().SerializeToString()


class ChannelCalls(OpsBase):
    """Publishing, reading and deleting messages; reading and setting attributes.

    DeleteChannelMessage and SetAttributes answer a replay of their request ID
    (``replays``); PublishToChannel carries none, so every call publishes.
    """

    def publish(self, request: pb.PublishToChannelRequest) -> None:
        check_identifier(request.flow_id, "flow_id")
        for message in request.messages:
            if not message.channel_name:
                raise _errors.invalid("messages.channel_name is required")
            require_value(
                message.value, f"channel {message.channel_name!r}", self._options.max_value_bytes
            )
        with self.state.tx() as conn:
            run = rows.running_run(self.state, request.flow_id, request.run_id)
            stored = writes.publish(conn, run["run_id"], request.messages)
            rows.event(
                conn,
                run["run_id"],
                channel_external_publish=pb.ChannelExternalPublishEvent(messages=stored),
            )
            waits.evaluate_waits(self.state, conn, run["run_id"])

    def channel_messages(self, request: pb.GetChannelMessagesRequest) -> list[pb.ChannelMessage]:
        check_identifier(request.flow_id, "flow_id")
        if not request.channel_name:
            raise _errors.invalid("channel_name is required")
        with self.state.db.lock:
            run = rows.existing_run(self.state, request.flow_id, request.run_id)
            result = []
            for message_id_, blob in self.state.db.conn.execute(
                "SELECT message_id, value FROM msgs WHERE run_id=? AND channel=? ORDER BY seq",
                (run["run_id"], request.channel_name),
            ):
                message = pb.ChannelMessage(
                    channel_name=request.channel_name, message_id=message_id_
                )
                message.value.ParseFromString(blob)
                result.append(message)
            return result

    def delete_message(self, request: pb.DeleteChannelMessageRequest) -> None:
        check_identifier(request.flow_id, "flow_id")
        if not request.channel_name or not request.message_id:
            raise _errors.invalid("channel_name and message_id are required")
        with self.state.tx() as conn:
            replay = self.replays.lookup(
                conn, "DeleteChannelMessage", request, request.flow_id, request.request_id
            )
            if replay.response is not None:
                return
            run = rows.running_run(self.state, request.flow_id, request.run_id)
            deletion = pb.ChannelMessageDeletion(
                channel_name=request.channel_name, message_id=request.message_id
            )
            writes.apply_writes(conn, run["run_id"], [], [], [deletion], strict_deletions=True)
            self.replays.record(conn, replay, _EMPTY)
            rows.event(
                conn,
                run["run_id"],
                channel_external_delete=pb.ChannelExternalDeleteEvent(messages=[deletion]),
            )

    def get_attributes(self, request: pb.GetAttributesRequest) -> list[pb.KV]:
        check_identifier(request.flow_id, "flow_id")
        with self.state.db.lock:
            run = rows.existing_run(self.state, request.flow_id, request.run_id)
            everything = _snapshot.attributes(self.state.db.conn, run["run_id"], None)
        wanted = set(request.keys)
        return [kv for kv in everything if request.all_keys or kv.key in wanted]

    def set_attributes(self, request: pb.SetAttributesRequest) -> None:
        check_identifier(request.flow_id, "flow_id")
        problem = writes.check_writes(self.state, request.attributes)
        if problem:
            raise _errors.invalid(problem)
        with self.state.tx() as conn:
            replay = self.replays.lookup(
                conn, "SetAttributes", request, request.flow_id, request.request_id
            )
            if replay.response is not None:
                return
            run = rows.running_run(self.state, request.flow_id, request.run_id)
            writes.apply_writes(conn, run["run_id"], request.attributes)
            self.replays.record(conn, replay, _EMPTY)
            rows.event(
                conn,
                run["run_id"],
                rpc_execution_completed=pb.RpcExecutionCompletedEvent(
                    upsert_attributes=request.attributes, is_set_attribute_api=True
                ),
            )
