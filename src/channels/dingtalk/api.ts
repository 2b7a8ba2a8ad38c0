/**
 * A small DingTalk OpenAPI client over Node's fetch: the app access token (cached until
 * shortly before it expires), JSON calls with the token header, multipart posts to the older
 * oapi host (token in the query), and sessionWebhook posts.
 * Every platform failure goes through `mapDingTalkError` (map-error.ts), the adapter's one mapper.
 */
import { ChannelError, PlatformAuthError } from "../../errors.js";
import { mapDingTalkError } from "./map-error.js";

/**
 * How long one OpenAPI call may take, answer body included. The renderer bounds sends and edits
 * on its own (`gateway.platform_call_timeout_ms`); this ends the request itself, and bounds the
 * calls nothing else does (the token, a file's download link).
 */
export const CALL_TIMEOUT_MS = 30_000;

/** Refresh the token this long before DingTalk says it expires (never more than 10 % of its life). */
const TOKEN_MARGIN_MS = 5 * 60_000;

export interface DingTalkApiOptions {
  channel: string;
  apiBase: string;
  /** Base of the older API host (media upload). */
  oapiBase: string;
  clientId: string;
  clientSecret: string;
}

interface CachedToken {
  value: string;
  refreshAt: number;
}

export class DingTalkApi {
  private token: CachedToken | undefined;
  private tokenRequest: Promise<string> | undefined;
  private readonly base: string;
  private readonly oapiBase: string;

  constructor(private readonly options: DingTalkApiOptions) {
    this.base = options.apiBase.replace(/\/+$/, "");
    this.oapiBase = options.oapiBase.replace(/\/+$/, "");
  }

  /** The app access token, fetched once and reused until shortly before it expires. */
  async accessToken(): Promise<string> {
    if (this.token && Date.now() < this.token.refreshAt) return this.token.value;
    this.tokenRequest ??= this.fetchToken().finally(() => {
      this.tokenRequest = undefined;
    });
    return this.tokenRequest;
  }

  private async fetchToken(): Promise<string> {
    const body = { appKey: this.options.clientId, appSecret: this.options.clientSecret };
    const data = await this.request("POST", "/v1.0/oauth2/accessToken", body, undefined, "access token");
    const value = typeof data.accessToken === "string" ? data.accessToken : "";
    if (!value) throw new PlatformAuthError(this.options.channel, "access token response had no accessToken");
    const lifeMs = (Number(data.expireIn) || 7200) * 1000;
    this.token = { value, refreshAt: Date.now() + lifeMs - Math.min(TOKEN_MARGIN_MS, lifeMs / 10) };
    return value;
  }

  /** Calls an OpenAPI endpoint (api_base) with the access token in its header. */
  async call(method: string, path: string, body: unknown, what: string, signal?: AbortSignal): Promise<Record<string, unknown>> {
    return this.withToken((token) => this.request(method, path, body, token, what, signal));
  }

  /**
   * POSTs a multipart form to an endpoint of the older host (oapi_base), the token in the
   * `access_token` query parameter as that host wants it.
   */
  async postForm(path: string, query: Record<string, string>, form: FormData, what: string) {
    return this.withToken((token) => {
      const url = new URL(`${this.oapiBase}${path}`);
      for (const [k, v] of Object.entries({ ...query, access_token: token })) url.searchParams.set(k, v);
      return this.exchange(url.href, { method: "POST", body: form }, what);
    });
  }

  /**
   * Runs `fn` with the access token. A cached token DingTalk rejects (revoked, expired early) is
   * dropped and `fn` runs once more with a fresh one.
   */
  private async withToken<T>(fn: (token: string) => Promise<T>): Promise<T> {
    const cached = this.token !== undefined && Date.now() < this.token.refreshAt;
    const token = await this.accessToken();
    try {
      return await fn(token);
    } catch (err) {
      if (!(err instanceof PlatformAuthError)) throw err;
      if (this.token?.value === token) this.token = undefined;
      if (!cached) throw err;
      return fn(await this.accessToken());
    }
  }

  /** Posts to a sessionWebhook (no token: the URL is the credential). */
  async postWebhook(url: string, body: unknown): Promise<void> {
    await this.send("POST", url, body, undefined, "sessionWebhook send");
  }

  private request(method: string, path: string, body: unknown, token: string | undefined, what: string, signal?: AbortSignal) {
    return this.send(method, `${this.base}${path}`, body, token, what, signal);
  }

  private send(method: string, url: string, body: unknown, token: string | undefined, what: string, signal?: AbortSignal) {
    const headers: Record<string, string> = { "content-type": "application/json", accept: "application/json" };
    if (token) headers["x-acs-dingtalk-access-token"] = token;
    return this.exchange(url, { method, headers, body: JSON.stringify(body) }, what, signal);
  }

  /**
   * One HTTP call whose answer is JSON; a non-2xx status or a non-zero `errcode` is thrown,
   * mapped. It ends after {@link CALL_TIMEOUT_MS} (a `timeout` error), or when `signal` aborts
   * (rejecting with its reason).
   */
  private async exchange(url: string, init: RequestInit, what: string, signal?: AbortSignal): Promise<Record<string, unknown>> {
    const limit = AbortSignal.timeout(CALL_TIMEOUT_MS);
    const bound = signal ? AbortSignal.any([limit, signal]) : limit;
    let res: Response;
    let text: string;
    try {
      res = await fetch(url, { ...init, signal: bound });
      text = await res.text();
    } catch (err) {
      if (signal?.aborted) throw signal.reason;
      const why = limit.aborted ? `no answer within ${CALL_TIMEOUT_MS / 1000} s` : (err as Error).message;
      const code = limit.aborted ? "timeout" : "network";
      throw new ChannelError(this.options.channel, code, `${what} failed: ${why}`, { cause: err });
    }
    let data: Record<string, unknown> = {};
    try {
      data = text ? (JSON.parse(text) as Record<string, unknown>) : {};
    } catch {
      data = { message: text.slice(0, 200) };
    }
    const errcode = typeof data.errcode === "number" ? data.errcode : undefined;
    if (res.ok && !errcode) return data;
    const failure = {
      status: res.status,
      code: typeof data.code === "string" ? data.code : undefined,
      errcode,
      message: String(data.message ?? data.errmsg ?? ""),
      retryAfter: res.headers.get("retry-after"),
    };
    throw mapDingTalkError(this.options.channel, failure, what);
  }
}
