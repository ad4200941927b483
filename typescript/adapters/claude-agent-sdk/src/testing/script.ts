/**
 * The scripted model of the unit tests and the conformance sidecar, read from a
 * Messages API request: the turn's prompt is the last user text (the CLI's
 * "Continue from where you left off." left out), and once the turn has tool
 * results and the model has not answered them, it answers
 * `Results: <tool>=<result>; ...`.
 *
 * @module
 */

import { CONTINUE_PROMPT } from "../runner.js";
import type { MessagesRequest } from "./fake_messages.js";

/** The turn's prompt: the last user text that is not the CLI's resume prompt. */
export function promptOf(request: MessagesRequest): string {
  return request.userTexts().filter((t) => t !== CONTINUE_PROMPT).at(-1) ?? "";
}

/** `[id, tool name, result]` of the current turn: the results after its prompt, bare tool names. */
export function turnResults(request: MessagesRequest): [string, string, string][] {
  const names = new Map(request.toolUses().map(([id, name]) => [id, name.split("__").at(-1) ?? name]));
  const messages = request.messages;
  const prompt = promptOf(request);
  const start = messages.findLastIndex((m) => request.userTexts([m]).includes(prompt));
  return request.toolResults(messages.slice(start + 1)).map(([id, text]) => [id, names.get(id) ?? id, text]);
}

/** Whether the model still owes an answer to tool results: results came after its last text. */
export function owesAnswer(request: MessagesRequest): boolean {
  const messages = request.messages;
  const lastResult = messages.findLastIndex((m) => request.toolResults([m]).length > 0);
  const prompt = messages.findLastIndex((m) => request.userTexts([m]).includes(promptOf(request)));
  if (lastResult < prompt) return false;
  const answered = messages.slice(lastResult + 1).some(
    (m) => m.role === "assistant" && JSON.stringify(m.content).includes("Results: "),
  );
  return !answered;
}

export function resultsText(request: MessagesRequest): string {
  return `Results: ${turnResults(request).map(([, name, text]) => `${name}=${text}`).join("; ")}`;
}
