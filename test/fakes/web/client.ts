/**
 * A browser, for tests of the web chat at the HTTP level: what the page's script does, spoken
 * from Node. One `WebBrowser` is one cookie jar (the `antler_chat_client` cookie and the session
 * cookie ride along on every request), optionally with an `Authorization: Bearer` header like an
 * API client; `tab(conv)` opens a page on one conversation (tab.ts). Requests with a body send
 * `content-type: application/json`, as the page does.
 */
import { randomUUID } from "node:crypto";
import { CookieJar } from "./cookies.js";
import type { WireProgress } from "./progress.js";
import { ChatTab } from "./tab.js";

/** The name of the cookie that holds the browser's client id. */
export const CLIENT_COOKIE = "antler_chat_client";

/** `GET <path>/api/session` when it succeeds. */
export interface SessionBody {
  user: { id: string };
  title: string;
  channel: string;
  login: false;
}

/** A button as the wire carries it. */
export interface WireButton {
  id: string;
  label: string;
}

/** `message` event data, and the history's `pending`. */
export interface WireMessage {
  id: string;
  text: string;
  html: string;
  buttons: WireButton[];
  questionId?: string;
  /** The progress panel under it; absent or null = none. */
  progress?: WireProgress | null;
}

/** `GET <path>/api/conversations/:conv/history`. */
export interface HistoryBody {
  messages: Array<{ id: string; role: "user" | "assistant"; text: string; html: string }>;
  pending: WireMessage | null;
  /** Every message waiting for a click (a question, or each open call of a tool approval); `pending` is the first. */
  waiting: WireMessage[];
  seq: number;
}

export interface RequestOptions {
  /** A JSON body; sets `content-type: application/json`. */
  json?: unknown;
  /** A raw body, sent with `contentType` (or none). */
  body?: string | Uint8Array;
  contentType?: string;
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

export interface BrowserOptions {
  /** Send `Authorization: Bearer <token>` on every request (an API client). */
  bearer?: string;
}

export class WebBrowser {
  readonly jar = new CookieJar();
  readonly origin: string;
  /** The page's path, e.g. `/chat`. */
  readonly path: string;

  /** `pageUrl` is the chat page, e.g. `http://127.0.0.1:8787/chat`. */
  constructor(
    pageUrl: string,
    private readonly options: BrowserOptions = {},
  ) {
    const url = new URL(pageUrl);
    this.origin = url.origin;
    this.path = url.pathname.replace(/\/$/, "");
  }

  /** A URL on the chat's origin: `/api/...` is taken under the page's path; other absolute paths as they are. */
  url(route: string): URL {
    if (/^https?:/.test(route)) return new URL(route);
    const underPage = route.startsWith("/api/") || route === "/api" || route === "" || route === "/";
    return new URL(underPage ? `${this.path}${route}` : route, this.origin);
  }

  /** One request with the jar's cookies; the cookies the response sets are kept. */
  async request(method: string, route: string, options: RequestOptions = {}): Promise<Response> {
    const url = this.url(route);
    const headers: Record<string, string> = { ...options.headers };
    const cookie = this.jar.header(url.pathname);
    if (cookie) headers.cookie = cookie;
    if (this.options.bearer) headers.authorization = `Bearer ${this.options.bearer}`;
    let body = options.body;
    if (options.json !== undefined) {
      body = JSON.stringify(options.json);
      headers["content-type"] = "application/json";
    } else if (options.contentType) headers["content-type"] = options.contentType;
    const response = await fetch(url, {
      method,
      headers,
      redirect: "manual",
      ...(body !== undefined ? { body } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
    });
    this.jar.take(response);
    return response;
  }

  /** `GET <path>/api/session`: the page's first request. */
  session(): Promise<Response> {
    return this.request("GET", "/api/session");
  }

  /** What the page does first when the browser has no client id yet: `GET session`, which sets it. */
  async ensureSession(): Promise<void> {
    if (this.jar.get(CLIENT_COOKIE)) return;
    const response = await this.session();
    await response.body?.cancel();
  }

  /** The client id the server gave this browser (fetches the session when needed). */
  async clientId(): Promise<string> {
    const response = await this.session();
    if (response.status !== 200) throw new Error(`GET session answered ${response.status}: ${await response.text()}`);
    const body = (await response.json()) as SessionBody;
    return body.user.id;
  }

  /** `POST <path>/api/session {token}`: the page's sign-in. */
  login(token: string): Promise<Response> {
    return this.request("POST", "/api/session", { json: { token } });
  }

  /** `POST .../messages {id, text}`; `id` is made up when not given. */
  say(conv: string, text: string, id: string = randomUUID()): Promise<Response> {
    return this.request("POST", `/api/conversations/${encodeURIComponent(conv)}/messages`, { json: { id, text } });
  }

  /** `GET .../history`, parsed; throws on anything but 200. */
  async history(conv: string): Promise<HistoryBody> {
    const response = await this.request("GET", `/api/conversations/${encodeURIComponent(conv)}/history`);
    if (response.status !== 200) throw new Error(`GET history answered ${response.status}: ${await response.text()}`);
    return (await response.json()) as HistoryBody;
  }

  /** A page showing conversation `conv`; call `open()` to load it. */
  tab(conv: string): ChatTab {
    return new ChatTab(this, conv);
  }
}

/** A conversation id as the page makes them up: `[A-Za-z0-9_-]{8,64}`. */
export function newConversationId(prefix = "conv"): string {
  return `${prefix}-${randomUUID().replace(/-/g, "").slice(0, 16)}`;
}
