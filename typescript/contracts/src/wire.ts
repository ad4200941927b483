/**
 * Runtime of the generated codecs in `gen/codec.ts`: the error type and the
 * per-kind read and write helpers of the wire format
 * (docs/wire-format.md, proto/README.md).
 *
 * Writing: a generated writer checks every field and builds a plain object in
 * wire shape (snake_case keys in field-number order, enum strings, time
 * strings, `null` for absent optionals), and `wireText` serializes it with one
 * `JSON.stringify` call. The checks make that call produce exactly the wire
 * format: strings hold no lone surrogates (the only thing `JSON.stringify`
 * escapes differently), numbers are in-range integers, Struct values are
 * plain JSON. One native pass over the tree is much faster than escaping each
 * string separately and concatenating the pieces.
 *
 * Reading: `JSON.parse`, then a generated reader checks each field and builds
 * the protoc-gen-es object.
 *
 * Paths are built only when something fails: helpers throw a `PathFailure`
 * carrying the failing segment (`.role`), every enclosing message or list
 * prepends its own segment while the failure unwinds, and the public
 * `encode*`/`decode*` function turns it into a `WireFormatError`. The happy
 * path allocates no path strings at all.
 *
 * Everything below except `WireFormatError` is internal to the package; the
 * entry point (`index.ts`) does not re-export it.
 *
 * @module
 */

import type { JsonObject } from "@bufbuild/protobuf";
import type { Timestamp } from "@bufbuild/protobuf/wkt";

/**
 * The one error the codecs throw. Its message is `<path>: <reason>`, where the
 * path starts with the message type and follows fields and list indexes:
 * `AgentSnapshot.messages[3].role: unknown value "bot"`.
 */
export class WireFormatError extends Error {
  override name = "WireFormatError";
  /** Short message type name the codec was called for (`AgentSnapshot`). */
  readonly typeName: string;
  /** Field path below the type (`messages[3].role`); "" for the value itself. */
  readonly fieldPath: string;
  /** The reason part of the message (`unknown value "bot"`). */
  readonly reason: string;

  constructor(typeName: string, fieldPath: string, reason: string, options?: { cause?: unknown }) {
    super(`${typeName}${joinPath(fieldPath)}: ${reason}`, options);
    this.typeName = typeName;
    this.fieldPath = fieldPath;
    this.reason = reason;
  }
}

function joinPath(fieldPath: string): string {
  if (fieldPath === "") return "";
  return fieldPath.charCodeAt(0) === 0x5b /* [ */ ? fieldPath : `.${fieldPath}`;
}

/**
 * Internal failure with a partial path (`.messages[3].role`). Deliberately not
 * an `Error`: no stack is captured, and it never leaves a public function.
 */
export class PathFailure {
  path: string;
  readonly reason: string;

  constructor(path: string, reason: string) {
    this.path = path;
    this.reason = reason;
  }
}

/** Prepends `segment` to the path of a failure passing through a container. */
export function within(error: unknown, segment: string): unknown {
  if (error instanceof PathFailure) error.path = segment + error.path;
  return error;
}

function trimDot(path: string): string {
  return path.charCodeAt(0) === 0x2e /* . */ ? path.slice(1) : path;
}

/** Turns whatever a decoder threw into a `WireFormatError` of `typeName`. */
export function decodeFailure(typeName: string, error: unknown): WireFormatError {
  if (error instanceof PathFailure) return new WireFormatError(typeName, trimDot(error.path), error.reason);
  if (error instanceof WireFormatError) return error;
  // Nothing else is expected from a decoder; the only source left is the
  // engine itself (for example a stack overflow), which we report as input
  // we cannot read rather than let a foreign error type escape.
  return new WireFormatError(typeName, "", "not valid JSON", { cause: error });
}

/** Turns a `PathFailure` thrown while encoding into a `WireFormatError`. */
export function encodeFailure(typeName: string, error: unknown): unknown {
  rawTexts.length = 0;
  if (error instanceof PathFailure) return new WireFormatError(typeName, trimDot(error.path), error.reason);
  return error;
}

const textDecoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/**
 * Parses wire JSON text (or UTF-8 bytes). A byte order mark is not JSON and
 * is rejected like any other non-JSON text.
 */
export function parseJson(typeName: string, text: string | Uint8Array): unknown {
  try {
    return JSON.parse(typeof text === "string" ? text : textDecoder.decode(text));
  } catch (error) {
    throw new WireFormatError(typeName, "", "not valid JSON", { cause: error });
  }
}

/** The JSON type name of a value, as error messages spell it. */
export function jsonTypeOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  return typeof value;
}

/** `<path>: expected <expected>, got <actual>`. */
export function mismatch(segment: string, expected: string, value: unknown): PathFailure {
  return new PathFailure(segment, `expected ${expected}, got ${jsonTypeOf(value)}`);
}

const LONE_SURROGATE = "lone surrogate in string";
const NOT_INTEGER = "expected integer, got number";
const OUT_OF_RANGE = "integer out of range";

/** Whether `value` is a JSON object (not null, not an array). */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** An empty, frozen record: what a missing message reads as. */
const EMPTY: Record<string, unknown> = Object.freeze({});

/** The object to read fields from: `value` itself, or `{}` for a missing key. */
export function objectOrEmpty(value: unknown, segment: string): Record<string, unknown> {
  if (isObject(value)) return value;
  if (value === undefined) return EMPTY;
  throw mismatch(segment, "object", value);
}

/** The object to write fields of; anything else is a type error. */
export function checkObject(value: unknown, segment: string): void {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw mismatch(segment, "object", value);
  }
}

/** A JSON value in wire shape, ready for `wireText`. */
export type WireValue = string | number | boolean | null | WireValue[] | WireObject | JsonObject;

/** A message in wire shape: wire keys in field-number order. */
export interface WireObject {
  [key: string]: WireValue;
}

/** Serializes a checked wire tree (see the module comment). */
export function wireText(tree: WireValue): string {
  const text = JSON.stringify(tree);
  if (rawTexts.length === 0) return text;
  const out = text.replace(RAW_PLACEHOLDER, (_, index: string) => rawTexts[Number(index)] as string);
  rawTexts.length = 0;
  return out;
}

// ---------------------------------------------------------------------------
// Unknown enum strings, shared by the generated enum readers and writers.

/** `<path>: unknown value "<value>"`, or the lone surrogate error first. */
export function unknownEnumString(value: unknown, segment: string): PathFailure {
  if (typeof value !== "string") return mismatch(segment, "string", value);
  if (!value.isWellFormed()) return new PathFailure(segment, LONE_SURROGATE);
  return new PathFailure(segment, `unknown value ${JSON.stringify(value)}`);
}

/** A number that is not a value of the enum, or `UNSPECIFIED`. */
export function badEnumNumber(value: unknown, segment: string): PathFailure {
  if (value === 0) return new PathFailure(segment, "unspecified enum value");
  if (typeof value !== "number") return mismatch(segment, "integer", value);
  return new PathFailure(segment, `unknown enum value ${String(value)}`);
}

// ---------------------------------------------------------------------------
// Lists

/** The parsed array, `[]` for a missing key; anything else is a type error. */
export function listOrEmpty(value: unknown, segment: string): unknown[] {
  if (Array.isArray(value)) return value;
  if (value === undefined) return [];
  throw mismatch(segment, "array", value);
}

/** The array to write; anything else is a type error. */
export function checkList(value: unknown, segment: string): readonly unknown[] {
  if (Array.isArray(value)) return value;
  throw mismatch(segment, "array", value);
}

/**
 * List items are never "missing": a JSON array cannot hold `undefined`, and
 * an in-memory one that does is refused like `null` instead of reading or
 * writing as a default.
 */
function required(value: unknown): unknown {
  return value === undefined ? null : value;
}

// ---------------------------------------------------------------------------
// Strings

/** Reads a non-optional string; a missing key is "". */
export function readString(value: unknown, segment: string): string {
  if (typeof value === "string") {
    if (value.isWellFormed()) return value;
    throw new PathFailure(segment, LONE_SURROGATE);
  }
  if (value === undefined) return "";
  throw mismatch(segment, "string", value);
}

/** Reads an optional string; a missing key or `null` is `undefined`. */
export function readOptString(value: unknown, segment: string): string | undefined {
  if (typeof value === "string") {
    if (value.isWellFormed()) return value;
    throw new PathFailure(segment, LONE_SURROGATE);
  }
  if (value === undefined || value === null) return undefined;
  throw mismatch(segment, "string", value);
}

/**
 * Checks a string for writing. `JSON.stringify` escapes exactly what the wire
 * format escapes (`"`, `\`, U+0000–U+001F with the short forms) and writes
 * everything else raw, except a lone surrogate, which it would escape and the
 * wire format refuses.
 */
export function writeString(value: unknown, segment: string): string {
  if (typeof value === "string") {
    if (value.isWellFormed()) return value;
    throw new PathFailure(segment, LONE_SURROGATE);
  }
  throw mismatch(segment, "string", value);
}

/** Checks an optional string; `undefined` (or `null`) is `null`. */
export function writeOptString(value: unknown, segment: string): string | null {
  if (value === undefined || value === null) return null;
  return writeString(value, segment);
}

/** Reads a list of strings; the parsed array itself is returned. */
export function readStringList(value: unknown, segment: string): string[] {
  const list = listOrEmpty(value, segment);
  for (let i = 0; i < list.length; i++) readListString(list[i], segment, i);
  return list as string[];
}

function readListString(item: unknown, segment: string, index: number): void {
  if (typeof item !== "string") throw mismatch(`${segment}[${index}]`, "string", item);
  if (!item.isWellFormed()) throw new PathFailure(`${segment}[${index}]`, LONE_SURROGATE);
}

/** Checks a list of strings; the array itself goes into the tree. */
export function writeStringList(value: unknown, segment: string): string[] {
  const list = checkList(value, segment);
  for (let i = 0; i < list.length; i++) readListString(list[i], segment, i);
  return list as string[];
}

// ---------------------------------------------------------------------------
// Booleans

/** Reads a non-optional boolean; a missing key is `false`. */
export function readBool(value: unknown, segment: string): boolean {
  if (typeof value === "boolean") return value;
  if (value === undefined) return false;
  throw mismatch(segment, "boolean", value);
}

/** Reads an optional boolean. */
export function readOptBool(value: unknown, segment: string): boolean | undefined {
  if (typeof value === "boolean") return value;
  if (value === undefined || value === null) return undefined;
  throw mismatch(segment, "boolean", value);
}

/** Checks a boolean for writing. */
export function writeBool(value: unknown, segment: string): boolean {
  if (typeof value === "boolean") return value;
  throw mismatch(segment, "boolean", value);
}

/** Checks an optional boolean. */
export function writeOptBool(value: unknown, segment: string): boolean | null {
  if (value === undefined || value === null) return null;
  return writeBool(value, segment);
}

/** Reads a list of booleans; the parsed array itself is returned. */
export function readBoolList(value: unknown, segment: string): boolean[] {
  const list = listOrEmpty(value, segment);
  for (let i = 0; i < list.length; i++) {
    if (typeof list[i] !== "boolean") throw mismatch(`${segment}[${i}]`, "boolean", list[i]);
  }
  return list as boolean[];
}

/** Checks a list of booleans; the array itself goes into the tree. */
export function writeBoolList(value: unknown, segment: string): boolean[] {
  const list = checkList(value, segment);
  for (let i = 0; i < list.length; i++) {
    if (typeof list[i] !== "boolean") throw mismatch(`${segment}[${i}]`, "boolean", list[i]);
  }
  return list as boolean[];
}

// ---------------------------------------------------------------------------
// Integers. JSON.parse gives doubles; an integral double is an integer
// (`5`, `5.0` and `5e0` alike), anything else is not. protoc-gen-es v2 types
// every int64 as `bigint`, `jstype = JS_NUMBER` included; on the wire it is a
// JSON number within ±(2^53 − 1) so a JavaScript reader keeps it exact.

const INT64_MAX = BigInt(Number.MAX_SAFE_INTEGER);
const INT64_MIN = -INT64_MAX;

function intFailure(value: unknown, segment: string): PathFailure {
  if (typeof value !== "number") return mismatch(segment, "integer", value);
  return new PathFailure(segment, Number.isInteger(value) ? OUT_OF_RANGE : NOT_INTEGER);
}

/** Reads a non-optional int32; a missing key is 0. */
export function readInt32(value: unknown, segment: string): number {
  if (typeof value === "number") {
    // `| 0` also turns -0 into 0.
    const int = value | 0;
    if (int === value) return int;
  } else if (value === undefined) {
    return 0;
  }
  throw intFailure(value, segment);
}

/** Reads an optional int32. */
export function readOptInt32(value: unknown, segment: string): number | undefined {
  if (value === undefined || value === null) return undefined;
  return readInt32(value, segment);
}

/** Reads a non-optional int64. */
export function readInt64(value: unknown, segment: string): bigint {
  if (typeof value === "number") {
    if (Number.isSafeInteger(value)) return BigInt(value);
  } else if (value === undefined) {
    return 0n;
  }
  throw intFailure(value, segment);
}

/** Reads an optional int64. */
export function readOptInt64(value: unknown, segment: string): bigint | undefined {
  if (value === undefined || value === null) return undefined;
  return readInt64(value, segment);
}

/** Checks an int32 for writing (`JSON.stringify` writes -0 as `0`). */
export function writeInt32(value: unknown, segment: string): number {
  if (typeof value === "number" && (value | 0) === value) return value;
  throw intFailure(value, segment);
}

/** Checks an optional int32. */
export function writeOptInt32(value: unknown, segment: string): number | null {
  if (value === undefined || value === null) return null;
  return writeInt32(value, segment);
}

/** Checks an int64 (a `bigint`, or a safe-integer `number`) for writing. */
export function writeInt64(value: unknown, segment: string): number {
  if (typeof value === "bigint") {
    if (value >= INT64_MIN && value <= INT64_MAX) return Number(value);
    throw new PathFailure(segment, OUT_OF_RANGE);
  }
  if (typeof value === "number" && Number.isSafeInteger(value)) return value;
  throw intFailure(value, segment);
}

/** Checks an optional int64. */
export function writeOptInt64(value: unknown, segment: string): number | null {
  if (value === undefined || value === null) return null;
  return writeInt64(value, segment);
}

/** Reads a list of int32. */
export function readInt32List(value: unknown, segment: string): number[] {
  const list = listOrEmpty(value, segment);
  const out: number[] = [];
  for (let i = 0; i < list.length; i++) out.push(readInt32(required(list[i]), `${segment}[${i}]`));
  return out;
}

/** Reads a list of int64. */
export function readInt64List(value: unknown, segment: string): bigint[] {
  const list = listOrEmpty(value, segment);
  const out: bigint[] = [];
  for (let i = 0; i < list.length; i++) out.push(readInt64(required(list[i]), `${segment}[${i}]`));
  return out;
}

/** Checks a list of int32; the array itself goes into the tree. */
export function writeInt32List(value: unknown, segment: string): number[] {
  const list = checkList(value, segment);
  for (let i = 0; i < list.length; i++) writeInt32(list[i], `${segment}[${i}]`);
  return list as number[];
}

/** Checks a list of int64 and converts it to numbers. */
export function writeInt64List(value: unknown, segment: string): number[] {
  const list = checkList(value, segment);
  const out: number[] = [];
  for (let i = 0; i < list.length; i++) out.push(writeInt64(list[i], `${segment}[${i}]`));
  return out;
}

// ---------------------------------------------------------------------------
// Times: `YYYY-MM-DDTHH:MM:SS.mmmZ` on the wire, a Timestamp in memory.

const TIMESTAMP = "google.protobuf.Timestamp" as const;
/** 0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z, the range RFC 3339 can write. */
const MIN_SECONDS = -62135596800n;
const MAX_SECONDS = 253402300799n;
const EPOCH_TEXT = "1970-01-01T00:00:00.000Z";

function epoch(): Timestamp {
  return { $typeName: TIMESTAMP, seconds: 0n, nanos: 0 };
}

function digit(text: string, index: number): number {
  const code = text.charCodeAt(index) - 48;
  return code >= 0 && code <= 9 ? code : -1000000;
}

function twoDigits(text: string, index: number): number {
  return digit(text, index) * 10 + digit(text, index + 1);
}

/** Days from 1970-01-01 to a proleptic Gregorian date (valid for year >= 1). */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yearOfEra = y - era * 400;
  const dayOfYear = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1;
  const dayOfEra = yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear;
  return era * 146097 + dayOfEra - 719468;
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

/**
 * Parses `YYYY-MM-DDTHH:MM:SS[.fraction](Z|+00:00)` with 1–9 fraction digits
 * and a real date; digits beyond milliseconds are truncated. Returns
 * `undefined` for anything else.
 */
export function parseTime(text: string): Timestamp | undefined {
  const n = text.length;
  if (n < 20) return undefined;
  if (
    text.charCodeAt(4) !== 0x2d ||
    text.charCodeAt(7) !== 0x2d ||
    text.charCodeAt(10) !== 0x54 ||
    text.charCodeAt(13) !== 0x3a ||
    text.charCodeAt(16) !== 0x3a
  ) {
    return undefined;
  }
  const year = twoDigits(text, 0) * 100 + twoDigits(text, 2);
  const month = twoDigits(text, 5);
  const day = twoDigits(text, 8);
  const hour = twoDigits(text, 11);
  const minute = twoDigits(text, 14);
  const second = twoDigits(text, 17);
  if (year < 1 || month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return undefined;
  if (hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 59) return undefined;
  let index = 19;
  let millis = 0;
  if (text.charCodeAt(index) === 0x2e) {
    const start = ++index;
    while (index < n) {
      const d = digit(text, index);
      if (d < 0) break;
      if (index - start < 3) millis = millis * 10 + d;
      index++;
    }
    const count = index - start;
    if (count < 1 || count > 9) return undefined;
    if (count === 1) millis *= 100;
    else if (count === 2) millis *= 10;
  }
  const rest = n - index;
  if (rest === 1 ? text.charCodeAt(index) !== 0x5a : !(rest === 6 && text.endsWith("+00:00"))) {
    return undefined;
  }
  const seconds = daysFromCivil(year, month, day) * 86400 + hour * 3600 + minute * 60 + second;
  return { $typeName: TIMESTAMP, seconds: BigInt(seconds), nanos: millis * 1000000 };
}

/** Reads a non-optional time; a missing key is the Unix epoch. */
export function readTime(value: unknown, segment: string): Timestamp {
  if (typeof value === "string") {
    const time = parseTime(value);
    if (time !== undefined) return time;
    if (!value.isWellFormed()) throw new PathFailure(segment, LONE_SURROGATE);
    throw new PathFailure(segment, `invalid time ${JSON.stringify(value)}`);
  }
  if (value === undefined) return epoch();
  throw mismatch(segment, "string", value);
}

/** Reads an optional time. */
export function readOptTime(value: unknown, segment: string): Timestamp | undefined {
  if (value === undefined || value === null) return undefined;
  return readTime(value, segment);
}

/** `00` to `99`, to format times without padding calls. */
const TWO_DIGITS = Array.from({ length: 100 }, (_, i) => (i < 10 ? `0${i}` : `${i}`));
const THREE_DIGITS = Array.from({ length: 1000 }, (_, i) => String(i).padStart(3, "0"));

/** The date part of the last day formatted: times of one value share days. */
let cachedDay = Number.NaN;
let cachedDate = "";

/**
 * Formats a Timestamp as `YYYY-MM-DDTHH:MM:SS.mmmZ`, truncating below the
 * millisecond. A Timestamp outside years 1–9999 or with nanos outside
 * 0–999999999 is refused.
 */
export function writeTime(value: unknown, segment: string): string {
  if (value === undefined) return EPOCH_TEXT;
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw mismatch(segment, "object", value);
  }
  const { seconds, nanos } = value as { seconds?: unknown; nanos?: unknown };
  if (
    typeof seconds !== "bigint" ||
    typeof nanos !== "number" ||
    seconds < MIN_SECONDS ||
    seconds > MAX_SECONDS ||
    !Number.isInteger(nanos) ||
    nanos < 0 ||
    nanos > 999999999
  ) {
    throw new PathFailure(segment, "invalid timestamp");
  }
  const total = Number(seconds);
  const day = Math.floor(total / 86400);
  if (day !== cachedDay) {
    // Date handles the calendar (years 1–9999 format as four digits).
    cachedDate = new Date(day * 86400000).toISOString().slice(0, 11);
    cachedDay = day;
  }
  const inDay = total - day * 86400;
  const hour = Math.floor(inDay / 3600);
  const minute = Math.floor((inDay - hour * 3600) / 60);
  const second = inDay - hour * 3600 - minute * 60;
  return `${cachedDate}${TWO_DIGITS[hour]}:${TWO_DIGITS[minute]}:${TWO_DIGITS[second]}.${
    THREE_DIGITS[Math.floor(nanos / 1000000)]
  }Z`;
}

/** Formats an optional time. */
export function writeOptTime(value: unknown, segment: string): string | null {
  if (value === undefined || value === null) return null;
  return writeTime(value, segment);
}

/** Reads a list of times. */
export function readTimeList(value: unknown, segment: string): Timestamp[] {
  const list = listOrEmpty(value, segment);
  const out: Timestamp[] = [];
  for (let i = 0; i < list.length; i++) out.push(readTime(required(list[i]), `${segment}[${i}]`));
  return out;
}

/** Formats a list of times. */
export function writeTimeList(value: unknown, segment: string): string[] {
  const list = checkList(value, segment);
  const out: string[] = [];
  for (let i = 0; i < list.length; i++) out.push(writeTime(required(list[i]), `${segment}[${i}]`));
  return out;
}

// ---------------------------------------------------------------------------
// Struct: a JSON object held as a protobuf-es `JsonObject`. Both directions
// walk it with an explicit stack, so nesting depth is bounded by memory and
// not by the call stack (JSON.parse itself does not recurse either).

const NUMBER_OUT_OF_RANGE = "number out of range";

/**
 * Checks a parsed Struct and returns it as is: strings (keys included) must
 * be well formed and numbers finite (`1e400` parses to Infinity). Errors are
 * reported at the Struct field's path.
 */
export function readStruct(value: unknown, segment: string): JsonObject {
  if (value === undefined) return {};
  if (!isObject(value)) throw mismatch(segment, "object", value);
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const item = stack.pop();
    if (typeof item === "string") {
      if (!item.isWellFormed()) throw new PathFailure(segment, LONE_SURROGATE);
    } else if (typeof item === "number") {
      if (!Number.isFinite(item)) throw new PathFailure(segment, NUMBER_OUT_OF_RANGE);
    } else if (Array.isArray(item)) {
      for (let i = 0; i < item.length; i++) stack.push(item[i]);
    } else if (item !== null && typeof item === "object") {
      for (const key of Object.keys(item)) {
        if (!key.isWellFormed()) throw new PathFailure(segment, LONE_SURROGATE);
        stack.push((item as Record<string, unknown>)[key]);
      }
    }
  }
  return value as JsonObject;
}

/** Reads an optional Struct. */
export function readOptStruct(value: unknown, segment: string): JsonObject | undefined {
  if (value === undefined || value === null) return undefined;
  return readStruct(value, segment);
}

/**
 * Struct texts that `JSON.stringify` cannot write as the wire format wants
 * (integers of 1e21 and more, nesting deeper than its recursion allows) are
 * written by `structText` and stand in the tree as a placeholder string that
 * `wireText` swaps for them. The placeholder starts with a lone surrogate,
 * which every checked string is free of, so its JSON form (`"\ud800...`) can
 * appear nowhere else in the output.
 */
const rawTexts: string[] = [];
const RAW_PREFIX = "\ud800dex-raw:";
const RAW_PLACEHOLDER = /"\\ud800dex-raw:(\d+)"/g;
/** Nesting depth up to which `JSON.stringify` writes a Struct itself. */
const MAX_FAST_DEPTH = 200;

function isPlain(value: object): boolean {
  if (Array.isArray(value)) return true;
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/**
 * Checks a Struct for writing: plain objects and arrays, finite numbers,
 * well-formed strings and keys, no `undefined`, functions, symbols, bigints or
 * cycles. Returns the Struct itself for `JSON.stringify`, or a placeholder for
 * the rare one it cannot write as the wire format wants.
 */
export function writeStruct(value: unknown, segment: string): JsonObject | string {
  if (value === undefined) return {};
  if (!isObject(value)) throw mismatch(segment, "object", value);
  let slow = false;
  const open = new Set<object>();
  // Entries are values to check, or a container whose children are done.
  const stack: { item: unknown; depth: number; close: boolean }[] = [{ item: value, depth: 1, close: false }];
  while (stack.length > 0) {
    const { item, depth, close } = stack.pop() as { item: unknown; depth: number; close: boolean };
    if (close) {
      open.delete(item as object);
      continue;
    }
    switch (typeof item) {
      case "string":
        if (!item.isWellFormed()) throw new PathFailure(segment, LONE_SURROGATE);
        break;
      case "number":
        if (!Number.isFinite(item)) throw new PathFailure(segment, NUMBER_OUT_OF_RANGE);
        if (item >= 1e21 || item <= -1e21) slow = true;
        break;
      case "boolean":
        break;
      case "object": {
        if (item === null) break;
        if (!isPlain(item)) throw new PathFailure(segment, "expected JSON value, got object");
        if (open.has(item)) throw new PathFailure(segment, "cyclic value");
        if (depth > MAX_FAST_DEPTH) slow = true;
        open.add(item);
        stack.push({ item, depth, close: true });
        if (Array.isArray(item)) {
          for (let i = item.length - 1; i >= 0; i--) stack.push({ item: item[i], depth: depth + 1, close: false });
        } else {
          for (const key of Object.keys(item)) {
            if (!key.isWellFormed()) throw new PathFailure(segment, LONE_SURROGATE);
            stack.push({ item: (item as Record<string, unknown>)[key], depth: depth + 1, close: false });
          }
        }
        break;
      }
      default:
        throw new PathFailure(segment, `expected JSON value, got ${typeof item}`);
    }
  }
  if (!slow) return value as JsonObject;
  rawTexts.push(structText(value));
  return `${RAW_PREFIX}${rawTexts.length - 1}`;
}

/** Checks an optional Struct. */
export function writeOptStruct(value: unknown, segment: string): JsonObject | string | null {
  if (value === undefined || value === null) return null;
  return writeStruct(value, segment);
}

/** A JSON number: integers as integers, others in shortest round-trip form. */
function structNumber(value: number): string {
  // String() switches to exponent form at 1e21; an integer stays an integer.
  if (Number.isInteger(value) && Math.abs(value) >= 1e21) return BigInt(value).toString();
  return String(value + 0);
}

interface StructFrame {
  readonly container: readonly unknown[] | Record<string, unknown>;
  readonly keys: readonly string[] | undefined;
  index: number;
}

/** Writes a checked Struct with an explicit stack, keys in insertion order. */
function structText(value: Record<string, unknown>): string {
  let out = "";
  const stack: StructFrame[] = [];
  const visit = (item: unknown): void => {
    if (typeof item === "number") {
      out += structNumber(item);
    } else if (typeof item !== "object" || item === null) {
      out += JSON.stringify(item);
    } else if (Array.isArray(item)) {
      out += "[";
      stack.push({ container: item, keys: undefined, index: 0 });
    } else {
      out += "{";
      stack.push({ container: item as Record<string, unknown>, keys: Object.keys(item), index: 0 });
    }
  };
  visit(value);
  while (stack.length > 0) {
    const frame = stack[stack.length - 1] as StructFrame;
    const { container, keys } = frame;
    if (keys === undefined) {
      const list = container as readonly unknown[];
      if (frame.index === list.length) {
        out += "]";
        stack.pop();
        continue;
      }
      if (frame.index > 0) out += ",";
      visit(list[frame.index++]);
    } else {
      if (frame.index === keys.length) {
        out += "}";
        stack.pop();
        continue;
      }
      const key = keys[frame.index++] as string;
      out += `${frame.index > 1 ? "," : ""}${JSON.stringify(key)}:`;
      visit((container as Record<string, unknown>)[key]);
    }
  }
  return out;
}
