/**
 * An agent for tests of what happens while a reply streams: a message it `holds` gets a first
 * part at once and the rest only after `open()` (or "stopped" once the run is aborted); any other
 * message is answered "Answer to <text>." at once. A resume counts as the message "resume".
 */
import type { Harness, RunEvent, RunOptions } from "../../src/harness/types.js";

export function gatedAgent(holds: (text: string) => boolean = () => true): { harness: Harness; open(): void } {
  let open: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => {
    open = resolve;
  });
  async function* answer(text: string, options?: RunOptions): AsyncGenerator<RunEvent> {
    if (!holds(text)) {
      yield { type: "done", text: `Answer to ${text}.` };
      return;
    }
    yield { type: "text", delta: "Part one." };
    await Promise.race([gate, new Promise((resolve) => options?.signal?.addEventListener("abort", resolve, { once: true }))]);
    if (options?.signal?.aborted) return yield { type: "error", code: "cancelled", message: "stopped" };
    yield { type: "text", delta: " Part two." };
    yield { type: "done", text: "Part one. Part two." };
  }
  const harness: Harness = {
    run: (_thread, text, options) => answer(text, options),
    resume: (_thread, _answer, options) => answer("resume", options),
    cancel: () => false,
    getThread: async () => undefined,
    close: async () => undefined,
  };
  return { harness, open: () => open() };
}
