/**
 * How the mock model answers one chat-completions request: an HTTP fault, a stream that stalls,
 * a stream of chunks (reasoning, text, then tool calls whose arguments come in pieces, then
 * usage), or one JSON completion for `stream: false`.
 */
import type { ServerResponse } from "node:http";
import { type ChatCompletionRequest, contentText, type MockReply, type MockUsage, sendError, sendJson } from "./mock-wire.js";

type Delta = Record<string, unknown>;
type Fault = Extract<MockReply, { fault: string }>;
type Scripted = Exclude<MockReply, { fault: string }>;

/** Answers `body` with `reply` on `res`; `stalled` collects responses a `stall` holds open, which the mock ends when it closes. */
export async function respond(
  res: ServerResponse,
  body: ChatCompletionRequest,
  reply: MockReply,
  id: string,
  authorization: string | undefined,
  stalled: Set<ServerResponse>,
): Promise<void> {
  if ("fault" in reply && (reply.fault === "http500" || reply.fault === "http429" || reply.fault === "http401")) {
    httpFault(res, reply, authorization);
    return;
  }
  const deltas = "fault" in reply ? faultDeltas(reply.afterChunks ?? 1) : replyDeltas(reply);
  if ("fault" in reply && reply.fault === "stall") {
    holdStalled(res, body, id, deltas.slice(0, reply.afterChunks ?? 1), stalled);
    return;
  }
  const finish = "toolCalls" in reply ? "tool_calls" : "stop";
  const usage = "usage" in reply && reply.usage ? reply.usage : estimateUsage(body, deltas.length);
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
  await stream(res, body, reply, id, deltas, { finish, usage });
}

/** An HTTP error the way OpenAI words it. */
function httpFault(res: ServerResponse, reply: Fault, authorization: string | undefined): void {
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
}

function openStream(res: ServerResponse): void {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
}

/** A stalled backend: the first chunks, then nothing, with the connection kept open. */
function holdStalled(
  res: ServerResponse,
  body: ChatCompletionRequest,
  id: string,
  deltas: Delta[],
  stalled: Set<ServerResponse>,
): void {
  openStream(res);
  const created = Math.floor(Date.now() / 1000);
  for (const delta of deltas) {
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
}

/** The SSE stream: one chunk per delta, paced by `delayMs`; a fault breaks it, else it ends with finish, usage and `[DONE]`. */
async function stream(
  res: ServerResponse,
  body: ChatCompletionRequest,
  reply: MockReply,
  id: string,
  deltas: Delta[],
  end: { finish: string; usage: MockUsage },
): Promise<void> {
  const delayMs = "delayMs" in reply ? (reply.delayMs ?? 0) : 0;
  openStream(res);
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
  res.write(`data: ${JSON.stringify(chunk({}, end.finish))}\n\n`);
  if (body.stream_options?.include_usage) {
    const usage = { id, object: "chat.completion.chunk", created, model: body.model, choices: [], usage: end.usage };
    res.write(`data: ${JSON.stringify(usage)}\n\n`);
  }
  res.write("data: [DONE]\n\n");
  res.end();
}

function replyDeltas(reply: Scripted): Delta[] {
  const deltas: Delta[] = [];
  const text = reply.text ?? "";
  const size = Math.max(1, "chunkSize" in reply ? (reply.chunkSize ?? 4) : 4);
  const reasoning = reply.reasoning ?? "";
  for (let at = 0; at < reasoning.length; at += size) deltas.push({ reasoning_content: reasoning.slice(at, at + size) });
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

function completion(body: ChatCompletionRequest, id: string, reply: Scripted, finish: string, usage: MockUsage) {
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
          ...(reply.reasoning ? { reasoning_content: reply.reasoning } : {}),
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

function maskKey(key: string): string {
  return key.length > 8 ? `${key.slice(0, 3)}${"*".repeat(key.length - 7)}${key.slice(-4)}` : "****";
}

function randomSuffix(): string {
  return Math.random().toString(36).slice(2, 12);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
