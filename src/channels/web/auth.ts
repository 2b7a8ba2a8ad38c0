/**
 * Who may use the web chat. Without a token only this machine may (loopback); with one, every
 * request must show it — as the session cookie the page gets by sending the token once, or as
 * `Authorization: Bearer` — loopback included, since behind a reverse proxy everyone is loopback.
 *
 * The session cookie holds a keyed hash of the token, never the token: a restart keeps people
 * signed in, and a new token signs everyone out. A second cookie carries the browser's random
 * client id, which is the chat user's id.
 */
import { createHmac, randomBytes } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { isLoopback, tokenMatches } from "../../server/auth.js";

export const SESSION_COOKIE = "antler_chat_session";
export const CLIENT_COOKIE = "antler_chat_client";
export const CLIENT_ID = /^[A-Za-z0-9_-]{16,64}$/;
const YEAR_S = 365 * 24 * 3600;

/** A refusal, as the route answers it. */
export interface Refusal {
  status: 401 | 403;
  body: { error: string; login: boolean };
}

export class WebAuth {
  private readonly session: string | undefined;

  constructor(
    private readonly token: string | undefined,
    /** The cookies' path: the page's own. */
    private readonly path: string,
  ) {
    this.session =
      token === undefined ? undefined : createHmac("sha256", token).update("antler web chat session").digest("base64url");
  }

  /** Whether a token guards the page. */
  get guarded(): boolean {
    return this.token !== undefined;
  }

  /** Undefined when the request may use the chat, else why not. */
  refusal(req: IncomingMessage): Refusal | undefined {
    if (this.token === undefined) {
      if (isLoopback(req.socket.remoteAddress)) return undefined;
      return {
        status: 403,
        body: {
          error:
            "This chat answers only on the machine it runs on. To open it to others, set channels.web.token (or server.admin_token) and give them the token.",
          login: false,
        },
      };
    }
    const header = req.headers.authorization;
    if (header?.startsWith("Bearer ") && tokenMatches(header.slice(7).trim(), this.token)) return undefined;
    const cookie = cookies(req)[SESSION_COOKIE];
    if (cookie !== undefined && this.session !== undefined && tokenMatches(cookie, this.session)) return undefined;
    return { status: 401, body: { error: "This chat needs its access token.", login: true } };
  }

  /** True for the configured token. */
  accepts(token: string): boolean {
    return this.token !== undefined && tokenMatches(token, this.token);
  }

  /** The cookie that signs this browser in. */
  sessionCookie(): string {
    return this.cookie(SESSION_COOKIE, this.session ?? "", YEAR_S);
  }

  /** The browser's client id, if it has a valid one. */
  clientOf(req: IncomingMessage): string | undefined {
    const id = cookies(req)[CLIENT_COOKIE];
    return id !== undefined && CLIENT_ID.test(id) ? id : undefined;
  }

  /** Gives the browser a client id when it has none; returns its id. */
  ensureClient(req: IncomingMessage, res: ServerResponse): string {
    const known = this.clientOf(req);
    if (known) return known;
    const id = randomBytes(16).toString("base64url");
    appendCookie(res, this.cookie(CLIENT_COOKIE, id, YEAR_S));
    return id;
  }

  private cookie(name: string, value: string, maxAgeS: number): string {
    return `${name}=${value}; Path=${this.path}; Max-Age=${maxAgeS}; HttpOnly; SameSite=Strict`;
  }
}

/** Adds a Set-Cookie header, keeping any already set. */
export function appendCookie(res: ServerResponse, cookie: string): void {
  const prior = res.getHeader("set-cookie");
  const list = prior === undefined ? [] : Array.isArray(prior) ? prior : [String(prior)];
  res.setHeader("set-cookie", [...list, cookie]);
}

function cookies(req: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (req.headers.cookie ?? "").split(";")) {
    const at = part.indexOf("=");
    if (at > 0) out[part.slice(0, at).trim()] = part.slice(at + 1).trim();
  }
  return out;
}
