/**
 * The chat-completions wire as the mock model speaks it: the request and reply shapes, the
 * checks the real API makes on a request, and the JSON answers. The replies themselves are
 * written by mock-replies.ts; the server is mock-model.ts.
 */
import type { IncomingMessage, ServerResponse } from "node:http";

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

/**
 * What the mock answers to one request. `reasoning`: thinking text streamed before the reply as
 * `reasoning_content` deltas (DeepSeek and vLLM style; `message.reasoning_content` unstreamed).
 */
export type MockReply =
  /** `firstByteMs`: wait this long before answering at all (a model slow to start). */
  | { text: string; reasoning?: string; chunkSize?: number; delayMs?: number; firstByteMs?: number; usage?: MockUsage }
  | {
      toolCalls: Array<{ name: string; args: Record<string, unknown>; id?: string }>;
      text?: string;
      reasoning?: string;
      delayMs?: number;
      usage?: MockUsage;
    }
  | { fault: "http500" | "http429" | "http401" | "malformed" | "disconnect"; afterChunks?: number; retryAfterS?: number }
  /**
   * A stalled backend: answers 200, streams `afterChunks` text chunks (0 = none), then sends
   * nothing more and keeps the connection open until the client goes away or the mock closes.
   */
  | { fault: "stall"; afterChunks?: number };

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

/** The checks the real API makes that matter to an agent's history. */
export function validateRequest(body: ChatCompletionRequest): string | undefined {
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

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

export function sendError(res: ServerResponse, status: number, message: string, type: string): void {
  sendJson(res, status, { error: { message, type, param: null, code: type } });
}

export async function readBody(req: IncomingMessage): Promise<string> {
  const parts: Buffer[] = [];
  for await (const part of req) parts.push(part as Buffer);
  return Buffer.concat(parts).toString("utf8");
}
