/**
 * The one way a route reads a request body: bounded by `server.max_body_bytes`, and failing with
 * an {@link HttpError} that says what to answer (413 over the cap, 400 for JSON that does not
 * parse). A client that goes away mid-body is a {@link ClientAbortedError}: nobody is left to
 * answer, and it is not the server's fault.
 */
import type { IncomingMessage } from "node:http";
import { AntlerError } from "../errors.js";

/** Webhook bodies are small; this is the cap when the server was not told otherwise. */
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

/** A request refused for what the client sent. The server answers it and logs it rate-limited, without a stack. */
export class HttpError extends AntlerError {
  constructor(
    readonly status: number,
    message: string,
    /** The response body; `{ error: message }` when not given. */
    readonly body?: unknown,
    readonly headers: Record<string, string> = {},
  ) {
    super("http_refused", message);
  }
}

/** The client closed the connection before its body was complete. */
export class ClientAbortedError extends AntlerError {
  constructor() {
    super("client_aborted", "the client closed the connection before the body was complete");
  }
}

/** 413, and the connection is closed: what is left of the body must not be read as a request. */
export function bodyTooLarge(limit: number): HttpError {
  return new HttpError(413, `request body over ${limit} bytes`, undefined, { connection: "close" });
}

const limits = new WeakMap<IncomingMessage, number>();

/** Sets the cap {@link readBody} applies to this request (the server does this for every request). */
export function limitBody(req: IncomingMessage, bytes: number): void {
  limits.set(req, bytes);
}

/** The length the client announced, or undefined for a chunked body. */
export function declaredLength(req: IncomingMessage): number | undefined {
  const value = req.headers["content-length"];
  if (value === undefined) return undefined;
  const n = Number(value);
  return Number.isFinite(n) ? n : undefined;
}

/** Reads a request body whole; stops at the cap with a 413 {@link HttpError}. */
export async function readBody(req: IncomingMessage, limit = limits.get(req) ?? DEFAULT_MAX_BODY_BYTES): Promise<Buffer> {
  if ((declaredLength(req) ?? 0) > limit) throw bodyTooLarge(limit);
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of req) {
      size += (chunk as Buffer).length;
      if (size > limit) throw bodyTooLarge(limit);
      chunks.push(chunk as Buffer);
    }
  } catch (err) {
    if (err instanceof HttpError) throw err;
    throw new ClientAbortedError();
  }
  return Buffer.concat(chunks);
}

/** Reads a JSON body; 400 when it does not parse. Its shape is the caller's to check. */
export async function readJson(req: IncomingMessage): Promise<unknown> {
  const text = (await readBody(req)).toString("utf8");
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new HttpError(400, "body is not JSON");
  }
}

/** True for a JSON object (not null, not an array). */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
