/**
 * A small DingTalk OpenAPI client over Node's fetch: the app access token (cached until
 * shortly before it expires), JSON calls with the token header, and sessionWebhook posts.
 * Every platform failure goes through `mapDingTalkError` (map-error.ts), the adapter's one mapper.
 */
import { ChannelError, PlatformAuthError } from "../../errors.js";
import { mapDingTalkError } from "./map-error.js";

/** Refresh the token this long before DingTalk says it expires (never more than 10 % of its life). */
const TOKEN_MARGIN_MS = 5 * 60_000;

export interface DingTalkApiOptions {
  channel: string;
  apiBase: string;
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

  constructor(private readonly options: DingTalkApiOptions) {
    this.base = options.apiBase.replace(/\/+$/, "");
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

  /**
   * Calls an OpenAPI endpoint with the access token. A cached token DingTalk rejects (revoked,
   * expired early) is dropped and the call is made once more with a fresh one.
   */
  async call(method: string, path: string, body: unknown, what: string): Promise<Record<string, unknown>> {
    const cached = this.token !== undefined && Date.now() < this.token.refreshAt;
    const token = await this.accessToken();
    try {
      return await this.request(method, path, body, token, what);
    } catch (err) {
      if (!(err instanceof PlatformAuthError)) throw err;
      if (this.token?.value === token) this.token = undefined;
      if (!cached) throw err;
      return this.request(method, path, body, await this.accessToken(), what);
    }
  }

  /** Posts to a sessionWebhook (no token: the URL is the credential). */
  async postWebhook(url: string, body: unknown): Promise<void> {
    await this.send("POST", url, body, undefined, "sessionWebhook send");
  }

  private request(method: string, path: string, body: unknown, token: string | undefined, what: string) {
    return this.send(method, `${this.base}${path}`, body, token, what);
  }

  private async send(method: string, url: string, body: unknown, token: string | undefined, what: string) {
    const headers: Record<string, string> = { "content-type": "application/json", accept: "application/json" };
    if (token) headers["x-acs-dingtalk-access-token"] = token;
    let res: Response;
    try {
      res = await fetch(url, { method, headers, body: JSON.stringify(body) });
    } catch (err) {
      throw new ChannelError(this.options.channel, "network", `${what} failed: ${(err as Error).message}`, { cause: err });
    }
    const text = await res.text();
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
