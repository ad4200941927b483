/**
 * A Server-Sent Events reader by the WHATWG rules our endpoints need: `data`
 * lines joined by `\n`, the last `id` kept, comments and `retry` skipped, LF,
 * CR and CRLF line ends. Small enough to own, so the package needs no parser
 * beyond the `ai` peer.
 *
 * @module
 */

/** One dispatched event: its data and the `id` in force when it was sent. */
export interface SseMessage {
  readonly data: string;
  readonly id: string | undefined;
}

/** The events of a byte stream, in order; ends with the stream (a partial event is dropped). */
export async function* readSse(body: ReadableStream<Uint8Array>): AsyncGenerator<SseMessage> {
  const decoder = new TextDecoder();
  const reader = body.getReader();
  let buffer = "";
  let data: string[] = [];
  let id: string | undefined;
  let pendingCr = false;
  const take = (line: string): SseMessage | undefined => {
    if (line === "") {
      if (data.length === 0) return undefined;
      const message = { data: data.join("\n"), id };
      data = [];
      return message;
    }
    if (line.startsWith(":")) return undefined;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "data") data.push(value);
    else if (field === "id" && !value.includes("\0")) id = value;
    return undefined;
  };
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      if (pendingCr && buffer.startsWith("\n")) buffer = buffer.slice(1);
      pendingCr = false;
      for (;;) {
        const end = buffer.search(/[\r\n]/);
        if (end < 0) break;
        const line = buffer.slice(0, end);
        if (buffer[end] === "\r") {
          if (end + 1 === buffer.length) {
            pendingCr = true;
            buffer = "";
          } else {
            buffer = buffer.slice(buffer[end + 1] === "\n" ? end + 2 : end + 1);
          }
        } else {
          buffer = buffer.slice(end + 1);
        }
        const message = take(line);
        if (message !== undefined) yield message;
      }
    }
  } finally {
    // A reader that stops early (a break, a [DONE]) closes the connection too.
    await reader.cancel().catch(() => undefined);
  }
}
