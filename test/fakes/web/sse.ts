/**
 * A reader for server-sent events as a browser's `EventSource` parses them (the HTML standard's
 * event-stream rules): lines end in CRLF, LF or CR; a blank line dispatches the event; `data:`
 * lines join with "\n"; `id:` sets the last event id (one containing NUL is ignored); `retry:`
 * takes digits only; a line starting with ":" is a comment; one space after the colon is dropped.
 */

/** One dispatched event. `id` is the last event id in force when it was dispatched. */
export interface SseEvent {
  event: string;
  data: string;
  id: string;
}

export interface SseHandlers {
  event(event: SseEvent): void;
  /** A comment line (the server's keep-alive), without the colon. */
  comment?(text: string): void;
  /** A `retry:` field, in ms. */
  retry?(ms: number): void;
}

/** Where a stream has got to: the last event id, kept across reconnections (sent as Last-Event-ID). */
export interface SseCursor {
  lastId: string;
}

/** Reads `body` until it ends, moving `cursor.lastId` on as `id:` fields arrive. */
export async function readSse(body: ReadableStream<Uint8Array>, handlers: SseHandlers, cursor: SseCursor): Promise<void> {
  const decoder = new TextDecoder("utf-8");
  const state: ParseState = { cursor, event: "", data: [], hasData: false };
  let buffer = "";
  let first = true;
  const reader = body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      buffer += done ? decoder.decode() : decoder.decode(value, { stream: true });
      if (first && buffer.length > 0) {
        // A byte-order mark at the very start is skipped.
        if (buffer.startsWith("\uFEFF")) buffer = buffer.slice(1);
        first = false;
      }
      buffer = takeLines(buffer, done, (line) => onLine(line, state, handlers));
      if (done) return;
    }
  } finally {
    reader.releaseLock();
  }
}

/** Calls `each` for every complete line in `buffer`; returns what is left (a partial line). */
function takeLines(buffer: string, done: boolean, each: (line: string) => void): string {
  let rest = buffer;
  for (;;) {
    const at = rest.search(/\r\n|\n|\r/);
    if (at < 0) break;
    // A CR at the very end may be the first half of a CRLF still on the way.
    if (rest[at] === "\r" && at === rest.length - 1 && !done) break;
    const width = rest.startsWith("\r\n", at) ? 2 : 1;
    each(rest.slice(0, at));
    rest = rest.slice(at + width);
  }
  // An unterminated last line is dropped, as EventSource does; so is an undispatched event.
  return done ? "" : rest;
}

interface ParseState {
  cursor: SseCursor;
  event: string;
  data: string[];
  hasData: boolean;
}

function onLine(line: string, state: ParseState, handlers: SseHandlers): void {
  if (line === "") {
    if (state.hasData) handlers.event({ event: state.event || "message", data: state.data.join("\n"), id: state.cursor.lastId });
    state.event = "";
    state.data = [];
    state.hasData = false;
    return;
  }
  if (line.startsWith(":")) {
    handlers.comment?.(line.slice(1));
    return;
  }
  const colon = line.indexOf(":");
  const field = colon < 0 ? line : line.slice(0, colon);
  let value = colon < 0 ? "" : line.slice(colon + 1);
  if (value.startsWith(" ")) value = value.slice(1);
  if (field === "event") state.event = value;
  else if (field === "data") {
    state.data.push(value);
    state.hasData = true;
  } else if (field === "id") {
    if (!value.includes("\0")) state.cursor.lastId = value;
  } else if (field === "retry") {
    if (/^\d+$/.test(value)) handlers.retry?.(Number(value));
  }
}
