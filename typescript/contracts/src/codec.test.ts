// Unit tests of the generated codecs and their runtime (wire.ts): writing
// rules, reading rules, error texts and paths, and the event payload union.

import assert from "node:assert/strict";
import { readdirSync } from "node:fs";
import path from "node:path";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";

import { create, equals, type JsonObject } from "@bufbuild/protobuf";
import { timestampFromDate, TimestampSchema } from "@bufbuild/protobuf/wkt";

import * as contracts from "./index.js";
import {
  AgentMessageSchema,
  AgentSnapshotSchema,
  AgentStateSchema,
  AgentStatus,
  AgentToolCallSchema,
  AgentUsageSchema,
  decodeAgentEventPayload,
  decodeAgentInterrupt,
  decodeAgentMessage,
  decodeAgentSnapshot,
  decodeAgentState,
  decodeAgentToolCall,
  decodeListAgentMessagesRequest,
  decodeQuestionAnswer,
  decodeTurnSessionSettings,
  encodeAgentEventPayload,
  encodeAgentMessage,
  encodeAgentSnapshot,
  encodeAgentState,
  encodeAgentToolCall,
  encodeAgentUsage,
  encodeTurnSessionSettings,
  encodeUpdateSessionSettingsRequest,
  InteractionMode,
  MessageRole,
  QuestionResolution,
  ToolCallStatus,
  ToolEffect,
  TurnSessionSettingsSchema,
  UpdateSessionSettingsRequestSchema,
  WireFormatError,
} from "./index.js";

/** Asserts that `run` throws a WireFormatError with exactly `message`. */
function throwsWire(run: () => unknown, message: string, fieldPath?: string): void {
  assert.throws(run, (error: unknown) => {
    assert.ok(error instanceof WireFormatError, `not a WireFormatError: ${String(error)}`);
    assert.equal(error.message, message);
    if (fieldPath !== undefined) assert.equal(error.fieldPath, fieldPath);
    return true;
  });
}

function toolCall() {
  return create(AgentToolCallSchema, {
    toolCallId: "call_1",
    turnId: "turn-1",
    toolName: "search",
    arguments: '{"q":"dex"}',
    effect: ToolEffect.READ,
    status: ToolCallStatus.SUCCEEDED,
    output: "found",
    deferralOrder: 2,
    inputChoices: ["a", "b"],
    inputAllowsFreeText: true,
  });
}

describe("writing", () => {
  test("writes every field in field-number order with null for absent optionals", () => {
    assert.equal(
      encodeAgentToolCall(toolCall()),
      '{"tool_call_id":"call_1","turn_id":"turn-1","tool_name":"search","arguments":"{\\"q\\":\\"dex\\"}",' +
        '"effect":"read","requires_approval":false,"status":"succeeded","output":"found","error":null,' +
        '"rejection_message":null,"deferral_order":2,"tool_source_reference":null,"trace_context":null,' +
        '"wait_until":null,"input_continuation":null,"input_answers":[],"input_question":null,' +
        '"input_choices":["a","b"],"input_allows_free_text":true,"cancellation_reason":null,"task_id":null,' +
        '"task_poll_interval_seconds":null,"task_answer_pending":false}',
    );
  });

  test("writes an unset non-optional message as its defaults and an unset optional as null", () => {
    const snapshot = create(AgentSnapshotSchema, {});
    assert.equal(snapshot.usage, undefined);
    assert.equal(
      encodeAgentSnapshot(snapshot),
      '{"state":null,"messages":[],"pending_interrupts":[],"tool_calls":[],"usage":{"model_calls":0,' +
        '"input_tokens":0,"output_tokens":0,"cached_input_tokens":0,"reasoning_tokens":0},' +
        '"queued_message_count":0,"plan":null,"queued_messages":[],"steered_messages":[],' +
        '"context_summary":null,"session_settings":null}',
    );
  });

  test("escapes strings like JSON.stringify and writes U+2028, U+2029 and non-ASCII raw", () => {
    const text = 'q"b\\s\b\f\n\r\t\u0000\u001f\u007f\u2028\u2029é😀/';
    const message = create(AgentMessageSchema, { role: MessageRole.USER, text });
    const encoded = encodeAgentMessage(message);
    assert.ok(encoded.includes(`"text":${JSON.stringify(text)}`));
    assert.ok(encoded.includes('\\u0000\\u001f\u007f\u2028\u2029é😀/'));
    assert.equal(decodeAgentMessage(encoded).text, text);
  });

  test("writes times with milliseconds and Z, truncating below the millisecond", () => {
    const message = create(AgentMessageSchema, {
      role: MessageRole.USER,
      createdAt: create(TimestampSchema, { seconds: 1793534400n, nanos: 123999999 }),
    });
    assert.match(encodeAgentMessage(message), /"created_at":"2026-11-01T12:00:00\.123Z"}$/);
    const old = create(AgentMessageSchema, {
      role: MessageRole.USER,
      createdAt: create(TimestampSchema, { seconds: -1n, nanos: 500000000 }),
    });
    assert.match(encodeAgentMessage(old), /"created_at":"1969-12-31T23:59:59\.500Z"}$/);
    const unset = create(AgentMessageSchema, { role: MessageRole.USER });
    assert.match(encodeAgentMessage(unset), /"created_at":"1970-01-01T00:00:00\.000Z"}$/);
  });

  test("writes int64 values up to ±(2^53 − 1)", () => {
    const usage = create(AgentUsageSchema, { modelCalls: 9007199254740991n, inputTokens: -9007199254740991n });
    assert.equal(
      encodeAgentUsage(usage),
      '{"model_calls":9007199254740991,"input_tokens":-9007199254740991,"output_tokens":0,' +
        '"cached_input_tokens":0,"reasoning_tokens":0}',
    );
  });

  test("writes a Struct compactly and refuses what JSON cannot hold", () => {
    const settings: JsonObject = { model: "gpt", n: 3, t: 0.5, big: 1e21, nested: { list: [1, null, true, "x"] } };
    const value = create(TurnSessionSettingsSchema, { turnId: "turn-1", sessionSettings: settings });
    const encoded = encodeTurnSessionSettings(value);
    assert.equal(
      encoded,
      '{"turn_id":"turn-1","session_settings":{"model":"gpt","n":3,"t":0.5,' +
        '"big":1000000000000000000000,"nested":{"list":[1,null,true,"x"]}}}',
    );
    assert.deepEqual(decodeTurnSessionSettings(encoded).sessionSettings, { ...settings, big: 1e21 });
    assert.equal(
      encodeTurnSessionSettings(create(TurnSessionSettingsSchema, { turnId: "t" })),
      '{"turn_id":"t","session_settings":{}}',
    );
    const bad = (sessionSettings: unknown) =>
      encodeUpdateSessionSettingsRequest(
        create(UpdateSessionSettingsRequestSchema, { sessionSettings: sessionSettings as JsonObject }),
      );
    throwsWire(() => bad({ a: Number.NaN }), "UpdateSessionSettingsRequest.session_settings: number out of range");
    throwsWire(
      () => bad({ a: [undefined] }),
      "UpdateSessionSettingsRequest.session_settings: expected JSON value, got undefined",
    );
    throwsWire(() => bad({ "\ud800": 1 }), "UpdateSessionSettingsRequest.session_settings: lone surrogate in string");
    const cyclic: Record<string, unknown> = {};
    cyclic["self"] = cyclic;
    throwsWire(() => bad(cyclic), "UpdateSessionSettingsRequest.session_settings: cyclic value");
  });

  test("keeps user text that looks like the internal Struct placeholder", () => {
    // A Struct with an integer >= 1e21 takes the placeholder path; text that
    // spells the placeholder (with a real backslash) must survive unchanged.
    const lookalike = "\\ud800dex-raw:0";
    const value = create(TurnSessionSettingsSchema, {
      turnId: lookalike,
      sessionSettings: { a: lookalike, big: -1e22, [lookalike]: [lookalike] },
    });
    const encoded = encodeTurnSessionSettings(value);
    assert.equal(
      encoded,
      `{"turn_id":${JSON.stringify(lookalike)},"session_settings":{"a":${JSON.stringify(lookalike)},` +
        `"big":-10000000000000000000000,${JSON.stringify(lookalike)}:[${JSON.stringify(lookalike)}]}}`,
    );
    assert.equal(decodeTurnSessionSettings(encoded).turnId, lookalike);
    // The placeholder list is per call: a later encode is unaffected.
    assert.equal(
      encodeTurnSessionSettings(create(TurnSessionSettingsSchema, { turnId: "t", sessionSettings: { n: 1 } })),
      '{"turn_id":"t","session_settings":{"n":1}}',
    );
  });

  test("writes every string exactly as JSON.stringify does", () => {
    let seed = 7;
    const next = (): number => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed >>> 8;
    };
    const alphabet = [0, 1, 8, 9, 10, 12, 13, 31, 32, 34, 47, 92, 127, 0xe9, 0x2028, 0x2029, 0xfeff, 0xffff];
    for (let round = 0; round < 500; round++) {
      let text = "";
      for (let i = next() % 12; i > 0; i--) {
        text += next() % 4 === 0 ? "\ud83d\ude00" : String.fromCharCode(alphabet[next() % alphabet.length] as number);
      }
      const message = create(AgentMessageSchema, { role: MessageRole.USER, turnId: text });
      assert.ok(encodeAgentMessage(message).includes(`"turn_id":${JSON.stringify(text)},`));
    }
  });

  test("writes and reads deeply nested Structs without recursion", () => {
    let deep: unknown = 1;
    for (let i = 0; i < 100000; i++) deep = i % 2 === 0 ? [deep] : { d: deep };
    const value = create(TurnSessionSettingsSchema, { turnId: "t", sessionSettings: { deep } as JsonObject });
    const encoded = encodeTurnSessionSettings(value);
    assert.equal(encodeTurnSessionSettings(decodeTurnSessionSettings(encoded)), encoded);
  });
});

describe("writing errors name the type and the field path", () => {
  test("int32 and int64 out of range", () => {
    const call = toolCall();
    call.deferralOrder = 2 ** 31;
    throwsWire(() => encodeAgentToolCall(call), "AgentToolCall.deferral_order: integer out of range", "deferral_order");
    call.deferralOrder = 1.5;
    throwsWire(() => encodeAgentToolCall(call), "AgentToolCall.deferral_order: expected integer, got number");
    const snapshot = create(AgentSnapshotSchema, {
      messages: [create(AgentMessageSchema, { role: MessageRole.USER, sequence: 1n })],
      usage: create(AgentUsageSchema, { inputTokens: 2n ** 53n }),
    });
    throwsWire(() => encodeAgentSnapshot(snapshot), "AgentSnapshot.usage.input_tokens: integer out of range");
    snapshot.usage = undefined;
    (snapshot.messages[0] as { sequence: bigint }).sequence = -(2n ** 53n);
    throwsWire(
      () => encodeAgentSnapshot(snapshot),
      "AgentSnapshot.messages[0].sequence: integer out of range",
      "messages[0].sequence",
    );
  });

  test("UNSPECIFIED and unknown enum values", () => {
    const call = toolCall();
    call.effect = ToolEffect.UNSPECIFIED;
    throwsWire(() => encodeAgentToolCall(call), "AgentToolCall.effect: unspecified enum value", "effect");
    call.effect = 42 as ToolEffect;
    throwsWire(() => encodeAgentToolCall(call), "AgentToolCall.effect: unknown enum value 42");
    const state = create(AgentStateSchema, { status: AgentStatus.RUNNING_MODEL });
    throwsWire(() => encodeAgentState(state), "AgentState.interaction_mode: unspecified enum value");
  });

  test("lone surrogates in strings and string lists", () => {
    const call = toolCall();
    call.toolName = "a\udc00b";
    throwsWire(() => encodeAgentToolCall(call), "AgentToolCall.tool_name: lone surrogate in string", "tool_name");
    const other = toolCall();
    other.inputChoices = ["ok", "\ud83d"];
    throwsWire(() => encodeAgentToolCall(other), "AgentToolCall.input_choices[1]: lone surrogate in string");
  });

  test("invalid Timestamps", () => {
    const call = toolCall();
    call.waitUntil = create(TimestampSchema, { seconds: 253402300800n });
    throwsWire(() => encodeAgentToolCall(call), "AgentToolCall.wait_until: invalid timestamp", "wait_until");
    call.waitUntil = create(TimestampSchema, { seconds: 0n, nanos: 1000000000 });
    throwsWire(() => encodeAgentToolCall(call), "AgentToolCall.wait_until: invalid timestamp");
    call.waitUntil = create(TimestampSchema, { seconds: 253402300799n, nanos: 999999999 });
    assert.match(encodeAgentToolCall(call), /"wait_until":"9999-12-31T23:59:59\.999Z"/);
  });

  test("wrong JavaScript types", () => {
    const call = toolCall() as unknown as Record<string, unknown>;
    call["turnId"] = undefined;
    throwsWire(
      () => encodeAgentToolCall(call as never),
      "AgentToolCall.turn_id: expected string, got undefined",
    );
    const nested = create(AgentSnapshotSchema, {});
    (nested as unknown as Record<string, unknown>)["toolCalls"] = [toolCall(), null];
    throwsWire(() => encodeAgentSnapshot(nested), "AgentSnapshot.tool_calls[1]: expected object, got null");
  });
});

describe("reading", () => {
  test("reads missing keys as defaults, json_default included", () => {
    const state = decodeAgentState("{}");
    assert.equal(state.interactionMode, InteractionMode.CHAT);
    assert.equal(state.status, AgentStatus.UNSPECIFIED);
    assert.equal(state.activeTurnId, undefined);
    assert.equal(state.nextMessageSequence, 0n);
    assert.equal(decodeQuestionAnswer("{}").resolution, QuestionResolution.ANSWERED);
    assert.equal(decodeListAgentMessagesRequest("{}").limit, 50);
    assert.equal(decodeAgentInterrupt("{}").allowsFreeText, true);
    const call = decodeAgentToolCall("{}");
    assert.equal(call.inputAllowsFreeText, true);
    assert.deepEqual(call.inputChoices, []);
    assert.equal(decodeAgentToolCall('{"input_allows_free_text":false}').inputAllowsFreeText, false);
    const snapshot = decodeAgentSnapshot("{}");
    assert.equal(snapshot.usage?.modelCalls, 0n);
    assert.equal(snapshot.state, undefined);
    assert.deepEqual(decodeTurnSessionSettings("{}").sessionSettings, {});
  });

  test("builds protobuf-es messages equal to create()", () => {
    const call = toolCall();
    const decoded = decodeAgentToolCall(encodeAgentToolCall(call));
    assert.ok(equals(AgentToolCallSchema, decoded, call));
    assert.equal(decoded.$typeName, "dex.agents.v1.AgentToolCall");
  });

  test("ignores unknown keys and takes the last of duplicate keys", () => {
    const message = decodeAgentMessage('{"role":"tool","extra":{"deep":[1,2]},"role":"user"}');
    assert.equal(message.role, MessageRole.USER);
  });

  test("accepts integral numbers in any JSON spelling", () => {
    for (const text of ["5", "5.0", "0.5e1", "5E0"]) {
      assert.equal(decodeAgentToolCall(`{"deferral_order":${text}}`).deferralOrder, 5);
    }
    assert.equal(decodeAgentMessage('{"sequence":1e2}').sequence, 100n);
    assert.equal(Object.is(decodeAgentToolCall('{"deferral_order":-0}').deferralOrder, 0), true);
    assert.equal(decodeAgentMessage('{"sequence":-9007199254740991}').sequence, -9007199254740991n);
  });

  test("accepts times with Z or +00:00 and 0 to 9 fraction digits", () => {
    const cases: [string, string][] = [
      ["2026-11-01T12:00:00Z", "2026-11-01T12:00:00.000Z"],
      ["2026-11-01T12:00:00+00:00", "2026-11-01T12:00:00.000Z"],
      ["2026-11-01T12:00:00.1Z", "2026-11-01T12:00:00.100Z"],
      ["2026-11-01T12:00:00.12+00:00", "2026-11-01T12:00:00.120Z"],
      ["2026-11-01T12:00:00.123456789Z", "2026-11-01T12:00:00.123Z"],
      ["2024-02-29T23:59:59.999999Z", "2024-02-29T23:59:59.999Z"],
      ["0001-01-01T00:00:00Z", "0001-01-01T00:00:00.000Z"],
      ["0099-03-01T00:00:00Z", "0099-03-01T00:00:00.000Z"],
      ["1900-03-01T00:00:00Z", "1900-03-01T00:00:00.000Z"],
      ["9999-12-31T23:59:59.999Z", "9999-12-31T23:59:59.999Z"],
    ];
    for (const [input, output] of cases) {
      const message = decodeAgentMessage(`{"role":"user","created_at":"${input}"}`);
      const date = new Date(output);
      assert.equal(message.createdAt?.seconds, BigInt(Math.floor(date.getTime() / 1000)), input);
      assert.match(encodeAgentMessage(message), new RegExp(`"created_at":"${output.replaceAll(".", "\\.")}"`));
    }
    const fromDate = timestampFromDate(new Date("2026-11-01T12:00:00.123Z"));
    assert.ok(equals(TimestampSchema, decodeAgentMessage('{"created_at":"2026-11-01T12:00:00.123Z"}').createdAt!, fromDate));
  });

  test("rejects times that are not the wire form or not real dates", () => {
    const bad = [
      "2026-02-29T00:00:00Z",
      "2026-04-31T00:00:00Z",
      "2026-11-01T24:00:00Z",
      "2026-11-01T12:60:00Z",
      "2026-11-01T12:00:60Z",
      "0000-01-01T00:00:00Z",
      "2026-11-01T12:00:00.Z",
      "2026-11-01T12:00:00.1234567890Z",
      "2026-11-01T12:00:00z",
      "2026-11-01t12:00:00Z",
      "2026-11-01 12:00:00Z",
      "2026-11-01T12:00:00",
      "2026-11-01T12:00:00-00:00",
      "2026-11-01T12:00:00+01:00",
      "2026-11-01T12:00:00.000+00:00Z",
      "+2026-11-01T12:00:00Z",
      "2026-1-01T12:00:00Z",
      "２026-11-01T12:00:00Z",
    ];
    for (const text of bad) {
      throwsWire(
        () => decodeAgentMessage(JSON.stringify({ created_at: text })),
        `AgentMessage.created_at: invalid time ${JSON.stringify(text)}`,
      );
    }
  });

  test("produces exactly the documented error texts", () => {
    const cases: [() => unknown, string][] = [
      [() => decodeAgentMessage("{"), "AgentMessage: not valid JSON"],
      [() => decodeAgentMessage(""), "AgentMessage: not valid JSON"],
      [() => decodeAgentMessage("\ufeff{}"), "AgentMessage: not valid JSON"],
      [() => decodeAgentMessage(new Uint8Array([0x7b, 0xff, 0x7d])), "AgentMessage: not valid JSON"],
      [() => decodeAgentMessage('{"role":NaN}'), "AgentMessage: not valid JSON"],
      [() => decodeAgentMessage("[]"), "AgentMessage: expected object, got array"],
      [() => decodeAgentMessage("null"), "AgentMessage: expected object, got null"],
      [() => decodeAgentMessage('{"turn_id":null}'), "AgentMessage.turn_id: expected string, got null"],
      [() => decodeAgentMessage('{"turn_id":1}'), "AgentMessage.turn_id: expected string, got number"],
      [() => decodeAgentMessage('{"role":true}'), "AgentMessage.role: expected string, got boolean"],
      [() => decodeAgentMessage('{"role":null}'), "AgentMessage.role: expected string, got null"],
      [() => decodeAgentMessage('{"role":"USER"}'), 'AgentMessage.role: unknown value "USER"'],
      [() => decodeAgentMessage('{"role":"a\\u0000\\"b"}'), 'AgentMessage.role: unknown value "a\\u0000\\"b"'],
      [() => decodeAgentMessage('{"role":"\\udfff"}'), "AgentMessage.role: lone surrogate in string"],
      [() => decodeAgentMessage('{"sequence":"1"}'), "AgentMessage.sequence: expected integer, got string"],
      [() => decodeAgentMessage('{"sequence":1.5}'), "AgentMessage.sequence: expected integer, got number"],
      [() => decodeAgentMessage('{"sequence":1e400}'), "AgentMessage.sequence: expected integer, got number"],
      [() => decodeAgentMessage('{"sequence":9007199254740992}'), "AgentMessage.sequence: integer out of range"],
      [() => decodeAgentToolCall('{"deferral_order":2147483648}'), "AgentToolCall.deferral_order: integer out of range"],
      [() => decodeAgentToolCall('{"deferral_order":-2147483649}'), "AgentToolCall.deferral_order: integer out of range"],
      [() => decodeAgentToolCall('{"input_choices":"a"}'), "AgentToolCall.input_choices: expected array, got string"],
      [() => decodeAgentToolCall('{"input_answers":[{},[]]}'), "AgentToolCall.input_answers[1]: expected object, got array"],
      [
        () => decodeAgentToolCall('{"input_answers":[{"resolution":"x"}]}'),
        'AgentToolCall.input_answers[0].resolution: unknown value "x"',
      ],
      [() => decodeAgentToolCall('{"wait_until":"\\ud800"}'), "AgentToolCall.wait_until: lone surrogate in string"],
      [() => decodeAgentSnapshot('{"usage":null}'), "AgentSnapshot.usage: expected object, got null"],
      [() => decodeAgentSnapshot('{"session_settings":[]}'), "AgentSnapshot.session_settings: expected object, got array"],
      [
        () => decodeAgentSnapshot('{"session_settings":{"a":[1e400]}}'),
        "AgentSnapshot.session_settings: number out of range",
      ],
      [
        () => decodeAgentSnapshot('{"session_settings":{"a":{"\\ud800":1}}}'),
        "AgentSnapshot.session_settings: lone surrogate in string",
      ],
      [
        () => decodeAgentSnapshot('{"state":{"interaction_mode":null}}'),
        "AgentSnapshot.state.interaction_mode: expected string, got null",
      ],
    ];
    for (const [run, message] of cases) throwsWire(run, message);
  });

  test("never lets anything but WireFormatError escape", () => {
    const inputs: unknown[] = [undefined, null, 42, {}, "{", "x".repeat(10)];
    for (const input of inputs) {
      assert.throws(
        () => decodeAgentSnapshot(input as string),
        (error: unknown) => error instanceof WireFormatError && error.message === "AgentSnapshot: not valid JSON",
      );
    }
  });
});

describe("WireFormatError", () => {
  test("is an Error with a name, structured fields and a cause", () => {
    try {
      decodeAgentSnapshot("{oops");
      assert.fail("no error");
    } catch (error) {
      assert.ok(error instanceof WireFormatError);
      assert.ok(error instanceof Error);
      assert.equal(error.name, "WireFormatError");
      assert.equal(error.typeName, "AgentSnapshot");
      assert.equal(error.fieldPath, "");
      assert.equal(error.reason, "not valid JSON");
      assert.ok(error.cause instanceof SyntaxError);
    }
  });
});

describe("event payloads", () => {
  test("decode by event type into the discriminated union", () => {
    const payload = decodeAgentEventPayload({ type: "tool_call_finished", payload: '{"tool_call_id":"c","tool_name":"t","status":"failed"}' });
    assert.equal(payload.type, "tool_call_finished");
    if (payload.type !== "tool_call_finished") assert.fail("narrowing");
    assert.equal(payload.payload.status, ToolCallStatus.FAILED);
    assert.deepEqual(encodeAgentEventPayload(payload), {
      type: "tool_call_finished",
      payload: '{"tool_call_id":"c","tool_name":"t","status":"failed"}',
    });
  });

  test("return unknown and adapter types with the raw text, even when it is not JSON", () => {
    const payload = decodeAgentEventPayload({ type: "openai_agents.handoff", payload: "not json" });
    assert.deepEqual(payload, { type: "unknown", eventType: "openai_agents.handoff", text: "not json" });
    assert.deepEqual(encodeAgentEventPayload(payload), { type: "openai_agents.handoff", payload: "not json" });
  });

  test("map every *Payload message to its snake_case event type", () => {
    const payloads = Object.keys(contracts.codecs).filter((name) => name.endsWith("Payload"));
    assert.ok(payloads.length > 10);
    for (const name of payloads) {
      const type = name
        .slice(0, -"Payload".length)
        .replace(/(?<!^)(?=[A-Z])/g, "_")
        .toLowerCase();
      const decoded = decodeAgentEventPayload({ type, payload: "{}" });
      assert.equal(decoded.type, type, name);
    }
  });

  test("report a broken payload of a known type", () => {
    throwsWire(
      () => decodeAgentEventPayload({ type: "turn_started", payload: '{"sequence":"x"}' }),
      "TurnStartedPayload.sequence: expected integer, got string",
    );
  });
});

describe("package entry point", () => {
  test("re-exports every generated protoc-gen-es module", () => {
    const here = path.dirname(fileURLToPath(import.meta.url));
    const dir = path.join(here, "gen", "dex", "agents", "v1");
    const exported = new Set(Object.keys(contracts));
    for (const file of readdirSync(dir).filter((f) => f.endsWith("_pb.js"))) {
      const stem = file.slice(0, -"_pb.js".length);
      assert.ok(exported.has(`file_dex_agents_v1_${stem}`), `${file} is not re-exported by index.ts`);
    }
  });

  test("registers a codec for every message schema", () => {
    const schemas = Object.entries(contracts).filter(
      ([name, value]) => name.endsWith("Schema") && (value as { kind?: string }).kind === "message",
    );
    assert.equal(Object.keys(contracts.codecs).length, schemas.length);
    for (const [name, codec] of Object.entries(contracts.codecs)) {
      assert.equal(codec.name, name);
      assert.equal(codec.schema.typeName, codec.typeName);
    }
  });
});
