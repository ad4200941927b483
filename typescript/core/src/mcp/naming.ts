/**
 * Agent-facing tool names (`<server>__<tool>`) and the reference a tool Step
 * calls by, in the Python source's format (`dex_agents.mcp`), so a call
 * record names its server and MCP tool without a listing.
 *
 * @module
 */

/** Model APIs commonly cap tool names at 64 characters; a longer name is left out. */
export const MAX_TOOL_NAME_LENGTH = 64;
const MCP_TOOL_NAME = /^[A-Za-z0-9._-]{1,128}$/;
const SEPARATOR = "__";

/** `<server>__<tool>`, or undefined when the MCP name or the result is not usable. */
export function qualifiedName(server: string, tool: string): string | undefined {
  if (!MCP_TOOL_NAME.test(tool)) return undefined;
  const name = `${server}${SEPARATOR}${tool}`;
  return name.length <= MAX_TOOL_NAME_LENGTH ? name : undefined;
}

/** The server and MCP tool of a qualified name: split on the first `__` (tool names may contain one). */
export function splitQualifiedName(name: string): { server: string; tool: string } | undefined {
  const at = name.indexOf(SEPARATOR);
  if (at <= 0 || at + SEPARATOR.length >= name.length) return undefined;
  return { server: name.slice(0, at), tool: name.slice(at + SEPARATOR.length) };
}

/**
 * What the session stores as `tool_source_reference`: the server, the MCP
 * tool, and whether the tool must run as a task (`taskSupport: required`).
 */
export interface ToolReference {
  readonly server: string;
  readonly tool: string;
  readonly task?: boolean;
}

export function encodeReference(reference: ToolReference): string {
  const value: Record<string, unknown> = { server: reference.server, tool: reference.tool };
  if (reference.task === true) value["task"] = true;
  return JSON.stringify(value);
}

export function decodeReference(text: string): ToolReference | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
  const { server, tool, task } = value as Record<string, unknown>;
  if (typeof server !== "string" || typeof tool !== "string") return undefined;
  return { server, tool, ...(task === true ? { task: true } : {}) };
}
