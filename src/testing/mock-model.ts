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

/** One message of a chat-completions request, as sent on the wire. */
export interface WireMessage {
  role: "system" | "developer" | "user" | "assistant" | "tool";
  content?: string | Array<{ type: string; text?: string; image_url?: { url?: string } }> | null;
  tool_calls?: Array<{ id: string; type: "function"; function: { name: string; arguments: string } }>;
  tool_call_id?: string;
  name?: string;
}

/** A parsed chat-completions request body. */
export interface ChatCompletionRequest {
  model: string;
  messages: WireMessage[];
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  tools?: Array<{ type: "function"; function: { name: string; description?: string; parameters?: unknown } }>;
  [key: string]: unknown;
}

export interface MockUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

/** What the mock answers to one request. */
export type MockReply =
  /** `firstByteMs`: wait this long before answering at all (a model slow to start). */
  | { text: string; chunkSize?: number; delayMs?: number; firstByteMs?: number; usage?: MockUsage }
  | {
      toolCalls: Array<{ name: string; args: Record<string, unknown>; id?: string }>;
      text?: string;
      delayMs?: number;
      usage?: MockUsage;
    }
  | { fault: "http500" | "http429" | "http401" | "malformed" | "disconnect"; afterChunks?: number; retryAfterS?: number }
  /**
   * A stalled backend: answers 200, streams `afterChunks` text chunks (0 = none), then sends
   * nothing more and keeps the connection open until the client goes away or the mock closes.
   */
  | { fault: "stall"; afterChunks?: number };

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

/** Plain text of a wire message's content. */
export function contentText(content: WireMessage["content"]): string {
  if (typeof content === "string") return content;
  if (!content) return "";
  return content.map((p) => p.text ?? "").join("");
}

/** The images of the newest user message in a request, as the data or http URLs the model received. */
export function lastUserImages(req: ChatCompletionRequest): string[] {
  const user = [...req.messages].reverse().find((m) => m.role === "user");
  if (!user || typeof user.content === "string" || !user.content) return [];
  return user.content.filter((p) => p.type === "image_url").map((p) => p.image_url?.url ?? "");
}

/** The text of the newest user message in a request. */
export function lastUserText(req: ChatCompletionRequest): string {
  const user = [...req.messages].reverse().find((m) => m.role === "user");
  return contentText(user?.content);
}

const defaultReply = (req: ChatCompletionRequest): MockReply => ({ text: `ok: ${lastUserText(req)}` });

export async function startMockModel(options: MockModelOptions = {}): Promise<MockModel> {
  const requests: ChatCompletionRequest[] = [];
  const queue: MockReply[] = [];
  const stalled = new Set<ServerResponse>();
  const transcriptionStalls: Array<"no-answer" | "body-stalls"> = [];
  let fallback: MockReply | ((req: ChatCompletionRequest) => MockReply) = defaultReply;
  const transcriptions: MockModel["transcriptions"] = [];
  let transcript: string | ((file: { name: string; data: Uint8Array }) => string) = (file) => `transcript of ${file.name}`;
  let counter = 0;
  const nextId = () => (options.repeatIds ? "chatcmpl-repeated" : `chatcmpl-mock-${++counter}`);

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) sendError(res, 500, `mock failure: ${String(err)}`, "server_error");
      else res.destroy();
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://mock");
    if (req.method === "GET" && url.pathname === "/v1/models") {
      sendJson(res, 200, { object: "list", data: [{ id: "mock-model", object: "model" }] });
      return;
    }
    if (req.method === "POST" && url.pathname === "/v1/audio/transcriptions") {
      await transcribe(req, res);
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
    requests.push(body);
    const reply = queue.shift() ?? (typeof fallback === "function" ? fallback(body) : fallback);
    await respond(res, body, reply, nextId(), req.headers.authorization, stalled);
  }

  /** OpenAI's transcription endpoint: multipart `file` and `model`, answered `{text}`. */
  async function transcribe(req: IncomingMessage, res: ServerResponse): Promise<void> {
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
    transcriptions.push(entry);
    const stall = transcriptionStalls.shift();
    if (stall) {
      stalled.add(res);
      res.once("close", () => stalled.delete(res));
      if (stall === "body-stalls") {
        res.writeHead(200, { "content-type": "application/json", "content-length": "64" });
        res.write('{"text": "half of a tran');
      }
      return;
    }
    sendJson(res, 200, { text: typeof transcript === "function" ? transcript(entry) : transcript });
  }

  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    enqueue: (...replies) => {
      queue.push(...replies);
    },
    setDefault: (reply) => {
      fallback = reply;
    },
    pending: () => queue.length,
    transcriptions,
    setTranscript: (text) => {
      transcript = text;
    },
    stallNextTranscription: (mode) => {
      transcriptionStalls.push(mode);
    },
    close: () => {
      for (const res of stalled) res.destroy();
      return closeServer(server);
    },
  };
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

/** The checks the real API makes that matter to an agent's history. */
function validateRequest(body: ChatCompletionRequest): string | undefined {
  if (typeof body.model !== "string" || body.model === "") return "you must provide a model parameter";
  if (!Array.isArray(body.messages) || body.messages.length === 0) return "'messages' must contain at least one message";
  const open = new Set<string>();
  for (const [i, m] of body.messages.entries()) {
    for (const part of Array.isArray(m.content) ? m.content : []) {
      if (part.type === "text" && typeof part.text === "string") continue;
      if (part.type === "image_url" && /^(data:image\/[\w.+-]+;base64,|https?:\/\/)/.test(part.image_url?.url ?? "")) continue;
      return `Invalid content part in messages[${i}]: expected text or an image_url with a data: or http(s) URL`;
    }
    if (m.role === "tool") {
      if (!m.tool_call_id || !open.has(m.tool_call_id)) {
        return `Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls' (messages[${i}])`;
      }
      open.delete(m.tool_call_id);
      continue;
    }
    if (open.size > 0) {
      return `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${[...open].join(", ")}`;
    }
    for (const call of m.role === "assistant" ? (m.tool_calls ?? []) : []) open.add(call.id);
  }
  if (open.size > 0) {
    return `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${[...open].join(", ")}`;
  }
  return undefined;
}

type Delta = Record<string, unknown>;

async function respond(
  res: ServerResponse,
  body: ChatCompletionRequest,
  reply: MockReply,
  id: string,
  authorization: string | undefined,
  /** Responses a `stall` fault holds open; the mock ends them when it closes. */
  stalled: Set<ServerResponse>,
): Promise<void> {
  if ("fault" in reply && (reply.fault === "http500" || reply.fault === "http429" || reply.fault === "http401")) {
    if (reply.fault === "http401") {
      // Like OpenAI: the message quotes the key, masked except for its ends.
      const key = (authorization ?? "").replace(/^Bearer /, "");
      sendError(
        res,
        401,
        `Incorrect API key provided: ${maskKey(key)}. You can find your API key at https://platform.openai.com/account/api-keys.`,
        "invalid_api_key",
      );
    } else if (reply.fault === "http429") {
      res.setHeader("retry-after", String(reply.retryAfterS ?? 1));
      sendError(res, 429, "Rate limit reached for requests. Please try again later.", "rate_limit_exceeded");
    } else {
      sendError(res, 500, "The server had an error while processing your request.", "server_error");
    }
    return;
  }
  const deltas = "fault" in reply ? faultDeltas(reply.afterChunks ?? 1) : replyDeltas(reply);
  if ("fault" in reply && reply.fault === "stall") {
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
    const created = Math.floor(Date.now() / 1000);
    for (const delta of deltas.slice(0, reply.afterChunks ?? 1)) {
      const part = {
        id,
        object: "chat.completion.chunk",
        created,
        model: body.model,
        choices: [{ index: 0, delta, finish_reason: null }],
      };
      res.write(`data: ${JSON.stringify(part)}\n\n`);
    }
    stalled.add(res);
    res.on("close", () => stalled.delete(res));
    return;
  }
  const finish = "toolCalls" in reply ? "tool_calls" : "stop";
  const usage = "usage" in reply && reply.usage ? reply.usage : estimateUsage(body, deltas.length);
  const delayMs = "delayMs" in reply ? (reply.delayMs ?? 0) : 0;
  if ("firstByteMs" in reply && reply.firstByteMs) await sleep(reply.firstByteMs);
  if (body.stream !== true) {
    if ("fault" in reply) {
      // A non-streaming call fails as a whole: drop the connection without an answer.
      res.destroy();
      return;
    }
    sendJson(res, 200, completion(body, id, reply, finish, usage));
    return;
  }
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
  const created = Math.floor(Date.now() / 1000);
  const chunk = (delta: Delta, finishReason: string | null) => ({
    id,
    object: "chat.completion.chunk",
    created,
    model: body.model,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
  });
  for (const [i, delta] of deltas.entries()) {
    if (i > 0 && delayMs > 0) await sleep(delayMs);
    if (res.destroyed) return;
    res.write(`data: ${JSON.stringify(chunk(delta, null))}\n\n`);
  }
  if ("fault" in reply) {
    if (delayMs > 0) await sleep(delayMs);
    if (reply.fault === "malformed") {
      res.write('data: {"id": "broken", "choices": [{"delta": {"content": "x"\n\n');
      res.end();
    } else {
      // Flush what was written, then cut the socket like a crashed backend would.
      setTimeout(() => res.socket?.destroy(), 10);
    }
    return;
  }
  res.write(`data: ${JSON.stringify(chunk({}, finish))}\n\n`);
  if (body.stream_options?.include_usage) {
    res.write(
      `data: ${JSON.stringify({ id, object: "chat.completion.chunk", created, model: body.model, choices: [], usage })}\n\n`,
    );
  }
  res.write("data: [DONE]\n\n");
  res.end();
}

function replyDeltas(reply: Exclude<MockReply, { fault: string }>): Delta[] {
  const deltas: Delta[] = [];
  const text = reply.text ?? "";
  const size = Math.max(1, "chunkSize" in reply ? (reply.chunkSize ?? 4) : 4);
  for (let at = 0; at < text.length; at += size) deltas.push({ content: text.slice(at, at + size) });
  if ("toolCalls" in reply) {
    reply.toolCalls.forEach((call, index) => {
      const callId = call.id ?? `call_${randomSuffix()}`;
      deltas.push({ tool_calls: [{ index, id: callId, type: "function", function: { name: call.name, arguments: "" } }] });
      const args = JSON.stringify(call.args);
      // Split the JSON arguments in three, as real backends cut them at arbitrary points.
      const step = Math.max(1, Math.ceil(args.length / 3));
      for (let at = 0; at < args.length; at += step) {
        deltas.push({ tool_calls: [{ index, function: { arguments: args.slice(at, at + step) } }] });
      }
    });
  }
  if (deltas.length === 0) deltas.push({ content: "" });
  const first = deltas[0];
  if (first) first.role = "assistant";
  return deltas;
}

function faultDeltas(afterChunks: number): Delta[] {
  const deltas: Delta[] = [];
  for (let i = 0; i < afterChunks; i++) deltas.push({ content: `part${i} ` });
  const first = deltas[0];
  if (first) first.role = "assistant";
  return deltas;
}

function completion(
  body: ChatCompletionRequest,
  id: string,
  reply: Exclude<MockReply, { fault: string }>,
  finish: string,
  usage: MockUsage,
) {
  const toolCalls =
    "toolCalls" in reply
      ? reply.toolCalls.map((c) => ({
          id: c.id ?? `call_${randomSuffix()}`,
          type: "function",
          function: { name: c.name, arguments: JSON.stringify(c.args) },
        }))
      : undefined;
  return {
    id,
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model: body.model,
    choices: [
      {
        index: 0,
        message: {
          role: "assistant",
          content: reply.text ?? (toolCalls ? null : ""),
          ...(toolCalls ? { tool_calls: toolCalls } : {}),
        },
        logprobs: null,
        finish_reason: finish,
      },
    ],
    usage,
  };
}

function estimateUsage(body: ChatCompletionRequest, completionChunks: number): MockUsage {
  const words = body.messages.reduce((n, m) => n + contentText(m.content).split(/\s+/).filter(Boolean).length, 0);
  const prompt = words + body.messages.length;
  return { prompt_tokens: prompt, completion_tokens: completionChunks, total_tokens: prompt + completionChunks };
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

function sendError(res: ServerResponse, status: number, message: string, type: string): void {
  sendJson(res, status, { error: { message, type, param: null, code: type } });
}

async function readBody(req: IncomingMessage): Promise<string> {
  const parts: Buffer[] = [];
  for await (const part of req) parts.push(part as Buffer);
  return Buffer.concat(parts).toString("utf8");
}

function maskKey(key: string): string {
  return key.length > 8 ? `${key.slice(0, 3)}${"*".repeat(key.length - 7)}${key.slice(-4)}` : "****";
}

function randomSuffix(): string {
  return Math.random().toString(36).slice(2, 12);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
