/**
 * A mock OpenAI-compatible chat-completions server on 127.0.0.1 for tests and benchmarks.
 *
 * It speaks the wire format `ChatOpenAI` expects: SSE chunks (`data: {...}\n\n` … `data: [DONE]`),
 * tool calls split across chunks (id and name first, then the arguments in pieces), usage in a
 * last chunk with empty choices when `stream_options.include_usage` is set, and plain JSON for
 * `stream: false`. Like the real API it rejects a conversation whose assistant tool calls are
 * not answered by tool messages (HTTP 400), so a broken history shows up in tests.
 *
 * Replies are scripted per test with `enqueue`; faults (HTTP 500, 429, a malformed chunk, a
 * dropped connection) and slow tokens are replies too.
 */

import { once } from "node:events";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { closeServer } from "../server/http.js";
import { respond } from "./mock-replies.js";
import {
  type ChatCompletionRequest,
  lastUserText,
  type MockReply,
  readBody,
  sendError,
  sendJson,
  validateRequest,
} from "./mock-wire.js";

export {
  type ChatCompletionRequest,
  contentText,
  lastUserImages,
  lastUserText,
  type MockReply,
  type MockUsage,
  type WireMessage,
} from "./mock-wire.js";

export interface MockModel {
  /** Base URL to put in models[].base_url, ending in /v1. */
  readonly url: string;
  /** Every chat-completions request received (parsed JSON bodies), oldest first. */
  readonly requests: ChatCompletionRequest[];
  /** Queue replies for the next requests, in order. */
  enqueue(...replies: MockReply[]): void;
  /** Reply used when the queue is empty (default: streams "ok: <last user message text>"). */
  setDefault(reply: MockReply | ((req: ChatCompletionRequest) => MockReply)): void;
  /** Number of replies still queued. */
  pending(): number;
  /** Chat completions being answered now: received, and their response not yet closed. */
  inFlight(): number;
  /**
   * The most chat completions in flight at once so far, to check a concurrency limit: give the
   * replies a `firstByteMs` or `delayMs`, so calls that may overlap really do.
   */
  maxInFlight(): number;
  /** Every `/audio/transcriptions` request: the uploaded file's name and bytes, and the model asked for. */
  readonly transcriptions: Array<{ name: string; data: Uint8Array; model: string }>;
  /** What `/audio/transcriptions` answers (default: `transcript of <file name>`). */
  setTranscript(text: string | ((file: { name: string; data: Uint8Array }) => string)): void;
  /**
   * The next transcription stalls: `no-answer` sends nothing at all, `body-stalls` sends the
   * status and half of the JSON body, then nothing. Held until the client gives up or the mock closes.
   */
  stallNextTranscription(mode: "no-answer" | "body-stalls"): void;
  close(): Promise<void>;
}

export interface MockModelOptions {
  /** Give every completion the same id, like some OpenAI-compatible backends do. */
  repeatIds?: boolean;
}

const defaultReply = (req: ChatCompletionRequest): MockReply => ({ text: `ok: ${lastUserText(req)}` });

type Transcript = string | ((file: { name: string; data: Uint8Array }) => string);

/** What one mock model holds: the script, what it was asked, and the answers it holds open. */
interface MockState {
  readonly requests: ChatCompletionRequest[];
  readonly queue: MockReply[];
  /** Responses held open (stalls); closing the mock ends them. */
  readonly stalled: Set<ServerResponse>;
  readonly transcriptionStalls: Array<"no-answer" | "body-stalls">;
  readonly transcriptions: MockModel["transcriptions"];
  fallback: MockReply | ((req: ChatCompletionRequest) => MockReply);
  transcript: Transcript;
  inFlight: number;
  maxInFlight: number;
  nextId(): string;
}

export async function startMockModel(options: MockModelOptions = {}): Promise<MockModel> {
  let counter = 0;
  const state: MockState = {
    requests: [],
    queue: [],
    stalled: new Set(),
    transcriptionStalls: [],
    transcriptions: [],
    fallback: defaultReply,
    transcript: (file) => `transcript of ${file.name}`,
    inFlight: 0,
    maxInFlight: 0,
    nextId: () => (options.repeatIds ? "chatcmpl-repeated" : `chatcmpl-mock-${++counter}`),
  };
  const server = createServer((req, res) => {
    handle(state, req, res).catch((err: unknown) => {
      if (!res.headersSent) sendError(res, 500, `mock failure: ${String(err)}`, "server_error");
      else res.destroy();
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests: state.requests,
    enqueue: (...replies) => {
      state.queue.push(...replies);
    },
    setDefault: (reply) => {
      state.fallback = reply;
    },
    pending: () => state.queue.length,
    inFlight: () => state.inFlight,
    maxInFlight: () => state.maxInFlight,
    transcriptions: state.transcriptions,
    setTranscript: (text) => {
      state.transcript = text;
    },
    stallNextTranscription: (mode) => {
      state.transcriptionStalls.push(mode);
    },
    close: () => {
      for (const res of state.stalled) res.destroy();
      return closeServer(server);
    },
  };
}

/** One request: the model list, a transcription, or a chat completion answered from the script. */
async function handle(state: MockState, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? "/", "http://mock");
  if (req.method === "GET" && url.pathname === "/v1/models") {
    sendJson(res, 200, { object: "list", data: [{ id: "mock-model", object: "model" }] });
    return;
  }
  if (req.method === "POST" && url.pathname === "/v1/audio/transcriptions") {
    await transcribe(state, req, res);
    return;
  }
  if (req.method !== "POST" || url.pathname !== "/v1/chat/completions") {
    sendError(res, 404, `unknown route ${req.method} ${url.pathname}`, "invalid_request_error");
    return;
  }
  let body: ChatCompletionRequest;
  try {
    body = JSON.parse(await readBody(req)) as ChatCompletionRequest;
  } catch {
    sendError(res, 400, "We could not parse the JSON body of your request.", "invalid_request_error");
    return;
  }
  const problem = validateRequest(body);
  if (problem) {
    sendError(res, 400, problem, "invalid_request_error");
    return;
  }
  state.requests.push(body);
  state.inFlight++;
  state.maxInFlight = Math.max(state.maxInFlight, state.inFlight);
  // "close" comes once the answer ended or the client went away (an aborted call).
  res.once("close", () => state.inFlight--);
  const reply = state.queue.shift() ?? (typeof state.fallback === "function" ? state.fallback(body) : state.fallback);
  await respond(res, body, reply, state.nextId(), req.headers.authorization, state.stalled);
}

/** OpenAI's transcription endpoint: multipart `file` and `model`, answered `{text}`. */
async function transcribe(state: MockState, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  let form: FormData;
  try {
    form = await new Request("http://mock/", {
      method: "POST",
      headers: { "content-type": req.headers["content-type"] ?? "" },
      body: Buffer.concat(chunks),
    }).formData();
  } catch {
    sendError(res, 400, "Could not parse multipart form", "invalid_request_error");
    return;
  }
  const file = form.get("file");
  const model = form.get("model");
  if (!(file instanceof Blob) || typeof model !== "string" || !model) {
    sendError(res, 400, "you must provide a file and a model", "invalid_request_error");
    return;
  }
  const entry = { name: (file as File).name ?? "", data: new Uint8Array(await file.arrayBuffer()), model };
  state.transcriptions.push(entry);
  const stall = state.transcriptionStalls.shift();
  if (stall) {
    state.stalled.add(res);
    res.once("close", () => state.stalled.delete(res));
    if (stall === "body-stalls") {
      res.writeHead(200, { "content-type": "application/json", "content-length": "64" });
      res.write('{"text": "half of a tran');
    }
    return;
  }
  const { transcript } = state;
  sendJson(res, 200, { text: typeof transcript === "function" ? transcript(entry) : transcript });
}

/** A models[] entry pointing ChatOpenAI at the mock. */
export function mockModelConfig(mock: MockModel, name = "mock"): Record<string, unknown> {
  return {
    name,
    use: "@langchain/openai:ChatOpenAI",
    model: "mock-model",
    api_key: "sk-mock-not-a-secret",
    base_url: mock.url,
    max_retries: 0,
  };
}
