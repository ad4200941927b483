"""The codec generator's model refuses protos outside the wire format."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from dexcodec._model import ModelError, load_model
from google.protobuf import descriptor_pb2
from google.protobuf.compiler import plugin_pb2

FDP = descriptor_pb2.FieldDescriptorProto


def _request(
    edit: Callable[[descriptor_pb2.FileDescriptorProto], None],
) -> plugin_pb2.CodeGeneratorRequest:
    file = descriptor_pb2.FileDescriptorProto(
        name="dex/agents/v1/t.proto", package="dex.agents.v1", syntax="proto3"
    )
    enum = file.enum_type.add(name="ToolColor")
    enum.value.add(name="TOOL_COLOR_UNSPECIFIED", number=0)
    enum.value.add(name="TOOL_COLOR_DARK_RED", number=1)
    message = file.message_type.add(name="TurnStartedPayload")
    message.field.add(
        name="sequence", number=2, type=FDP.TYPE_INT64, json_name="sequence"
    ).options.jstype = descriptor_pb2.FieldOptions.JS_NUMBER
    message.field.add(
        name="color",
        number=1,
        type=FDP.TYPE_ENUM,
        type_name=".dex.agents.v1.ToolColor",
        json_name="color",
    )
    edit(file)
    return plugin_pb2.CodeGeneratorRequest(file_to_generate=[file.name], proto_file=[file])


def test_model_orders_fields_and_names_enum_strings_and_events() -> None:
    model = load_model(_request(lambda file: None))
    message = model.message("TurnStartedPayload")
    assert [f.name for f in message.fields] == ["color", "sequence"]
    assert message.event_type == "turn_started"
    assert [(v.short_name, v.wire) for v in model.enum("ToolColor").values] == [
        ("DARK_RED", "dark_red")
    ]


def _bad_prefix(file: descriptor_pb2.FileDescriptorProto) -> None:
    file.enum_type[0].value.add(name="COLOR_BLUE", number=2)


def _int64_without_jstype(file: descriptor_pb2.FileDescriptorProto) -> None:
    file.message_type[0].field.add(name="count", number=3, type=FDP.TYPE_INT64, json_name="count")


def _double(file: descriptor_pb2.FileDescriptorProto) -> None:
    file.message_type[0].field.add(name="ratio", number=3, type=FDP.TYPE_DOUBLE, json_name="ratio")


def _oneof(file: descriptor_pb2.FileDescriptorProto) -> None:
    message = file.message_type[0]
    message.oneof_decl.add(name="choice")
    message.field.add(name="a", number=3, type=FDP.TYPE_STRING, json_name="a", oneof_index=0)


def _foreign_package(file: descriptor_pb2.FileDescriptorProto) -> None:
    file.package = "other.v1"


def _bad_default(file: descriptor_pb2.FileDescriptorProto) -> None:
    field = file.message_type[0].field.add(
        name="flag", number=3, type=FDP.TYPE_BOOL, json_name="flag"
    )
    # The json_default extension (50001) holding text that is not JSON.
    field.options.MergeFromString(b"\x8a\xb5\x18\x03tru")


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (_bad_prefix, "ToolColor.COLOR_BLUE: value lacks the prefix 'TOOL_COLOR_'"),
        (_int64_without_jstype, "TurnStartedPayload.count: int64 fields need [jstype = JS_NUMBER]"),
        (_double, "TurnStartedPayload.ratio: field type 1 is not part of the wire format"),
        (_oneof, "TurnStartedPayload.choice: oneofs are not supported"),
        (_foreign_package, "dex/agents/v1/t.proto: package 'other.v1' is not 'dex.agents.v1'"),
        (_bad_default, "TurnStartedPayload.flag: json_default 'tru' is not JSON text"),
    ],
    ids=["enum_prefix", "int64_jstype", "double", "oneof", "package", "json_default"],
)
def test_model_refuses_what_the_wire_format_does_not_define(
    edit: Callable[[descriptor_pb2.FileDescriptorProto], None], message: str
) -> None:
    with pytest.raises(ModelError) as raised:
        load_model(_request(edit))
    assert str(raised.value) == message
