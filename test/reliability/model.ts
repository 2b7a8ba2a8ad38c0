/**
 * The model side of a probe: the mock OpenAI-compatible server (test/fakes/openai.ts) behind a
 * proxy that adds what the mock lacks, a stalled stream (a few tokens, then nothing, connection
 * left open), and records when each request came. Replies are scripted by the user's text,
 * `<id> <kind>`: `long`/`medium`/`short` stream a reply that only that message can have (so the
 * chat shows whose answer it is), the fault kinds fail every attempt of that message.
 */
import type { ServerResponse } from "node:http";
import { type ChatCompletionRequest, lastUserText, type MockReply, startMockModel } from "../fakes/openai.js";
import { startProxy } from "./proxy.js";

export type FaultKind = "http500" | "http429" | "disconnect" | "malformed" | "stall";
export type ReplyKind = "long" | "medium" | "short";

interface Profile {
  words: number;
  chunkSize: number;
  delayMs: number;
}

/** long: ~1.5k characters over ~8 s; medium: ~600 over ~1.5 s; short: ~150 at once. */
export const PROFILES: Record<ReplyKind, Profile> = {
  long: { words: 240, chunkSize: 12, delayMs: 60 },
  medium: { words: 100, chunkSize: 20, delayMs: 40 },
  short: { words: 24, chunkSize: 16, delayMs: 5 },
};

const VOCABULARY = "the gateway keeps every message safe and answers each one exactly once even on a bad day".split(" ");

/** The one reply message `id` must end up showing. */
export function expectedReply(id: string, kind: ReplyKind): string {
  const words = Array.from({ length: PROFILES[kind].words }, (_, i) => VOCABULARY[i % VOCABULARY.length]);
  return `Answer to ${id}: ${words.join(" ")} (end of ${id})`;
}

/** Text a stalled or broken stream shows before it stops: "part0 part1 …" (the mock's fault prefix). */
export const FAULT_PREFIX = /^(part\d+\s*)+$/;

export interface ModelRequest {
  at: number;
  id: string;
  kind: string;
}

export interface ScriptedModel {
  /** Base URL for models[].base_url. */
  readonly url: string;
  readonly requests: ModelRequest[];
  /** Open stalled streams right now. */
  readonly stalled: number;
  close(): Promise<void>;
}

function script(req: ChatCompletionRequest): MockReply {
  const [id = "?", kind = "short"] = lastUserText(req).trim().split(/\s+/);
  if (kind === "http500" || kind === "http429") return { fault: kind, retryAfterS: 1 };
  if (kind === "disconnect" || kind === "malformed") return { fault: kind, afterChunks: 2 };
  const profile = PROFILES[kind as ReplyKind] ?? PROFILES.short;
  const text = expectedReply(id, (kind in PROFILES ? kind : "short") as ReplyKind);
  return { text, chunkSize: profile.chunkSize, delayMs: profile.delayMs };
}

/** Starts the mock behind the proxy; `reply` scripts it (default: the `<id> <kind>` script above). */
export async function startScriptedModel(reply: (req: ChatCompletionRequest) => MockReply = script): Promise<ScriptedModel> {
  const mock = await startMockModel();
  mock.setDefault(reply);
  const requests: ModelRequest[] = [];
  const open = new Set<ServerResponse>();
  const proxy = await startProxy(mock.url.replace(/\/v1$/, ""), (x) => {
    if (x.req.method !== "POST") return x.pass();
    let text = "";
    try {
      text = lastUserText(JSON.parse(x.body.toString("utf8")) as ChatCompletionRequest);
    } catch {
      // not JSON: the mock answers 400
    }
    const [id = "?", kind = "?"] = text.trim().split(/\s+/);
    requests.push({ at: Date.now(), id, kind });
    if (kind === "stall") return stall(x.res, open);
    x.pass();
  });
  return {
    url: `${proxy.url}/v1`,
    requests,
    get stalled() {
      return open.size;
    },
    async close() {
      for (const res of open) res.destroy();
      await proxy.close();
      await mock.close();
    },
  };
}

/** 200, three content chunks, then silence with the connection held open. */
function stall(res: ServerResponse, open: Set<ServerResponse>): void {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
  const created = Math.floor(Date.now() / 1000);
  for (let i = 0; i < 3; i++) {
    const delta = i === 0 ? { role: "assistant", content: `part${i} ` } : { content: `part${i} ` };
    const chunk = {
      id: "chatcmpl-stall",
      object: "chat.completion.chunk",
      created,
      model: "mock-model",
      choices: [{ index: 0, delta, finish_reason: null }],
    };
    res.write(`data: ${JSON.stringify(chunk)}\n\n`);
  }
  open.add(res);
  res.on("close", () => open.delete(res));
}
