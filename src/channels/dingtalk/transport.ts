/**
 * dingtalk-stream's `DWClient`, adjusted for Antler:
 * - `getEndpoint()` posts to the configured `gateway_url` (the SDK hard-codes the public one);
 * - only the CALLBACK topics we handle are subscribed (the SDK's default list is shared by all
 *   instances and subscribes to every EVENT);
 * - after `stop()` no scheduled reconnect runs, and a reconnect never leaves the previous
 *   heartbeat timer running (the SDK 2.1.5 starts a new one per connection and clears one).
 */
import { DWClient } from "dingtalk-stream";
import { CALL_TIMEOUT_MS } from "./api.js";
import { mapDingTalkError } from "./map-error.js";

export interface StreamClientOptions {
  channel: string;
  clientId: string;
  clientSecret: string;
  gatewayUrl: string;
  /** CALLBACK topics to subscribe to. */
  topics: string[];
  /** Told when the socket comes up (true) or goes down (false). */
  onConnection?(up: boolean): void;
}

/** SDK fields that are private in its typings but that a subclass has to reach. */
interface SdkInternals {
  dw_url?: string;
  socket?: { once(event: "close", listener: () => void): void };
  heartbeatIntervallId?: ReturnType<typeof setInterval>;
}

export class AntlerStreamClient extends DWClient {
  private stopped = false;

  constructor(private readonly opts: StreamClientOptions) {
    super({ clientId: opts.clientId, clientSecret: opts.clientSecret, keepAlive: true, ua: "antler" });
    this.config.subscriptions = opts.topics.map((topic) => ({ type: "CALLBACK", topic }));
  }

  override async getEndpoint(): Promise<this> {
    const body = {
      clientId: this.opts.clientId,
      clientSecret: this.opts.clientSecret,
      ua: this.config.ua,
      subscriptions: this.config.subscriptions,
    };
    const res = await fetch(this.opts.gatewayUrl, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json" },
      body: JSON.stringify(body),
      // A gateway that never answers must not hold the stream's start (and its reconnects) for good.
      signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
    });
    const data = (await res.json().catch(() => ({}))) as Record<string, unknown>;
    const { endpoint, ticket } = data;
    if (!res.ok || typeof endpoint !== "string" || typeof ticket !== "string") {
      const failure = {
        status: res.ok ? 502 : res.status,
        code: typeof data.code === "string" ? data.code : undefined,
        message: String(data.message ?? "no endpoint in the answer"),
      };
      throw mapDingTalkError(this.opts.channel, failure, "stream gateway connections/open");
    }
    (this as unknown as SdkInternals).dw_url = `${endpoint}?ticket=${encodeURIComponent(ticket)}`;
    return this;
  }

  override async connect(): Promise<void> {
    if (this.stopped) return;
    await super.connect();
  }

  override async _connect(): Promise<void> {
    this.clearHeartbeat();
    if (this.stopped) throw new Error("stream client stopped");
    await super._connect();
    (this as unknown as SdkInternals).socket?.once("close", () => {
      if (!this.stopped) this.opts.onConnection?.(false);
    });
    this.opts.onConnection?.(true);
  }

  /** Closes the socket for good: no reconnect, no timers. */
  stop(): void {
    this.stopped = true;
    this.disconnect();
    this.clearHeartbeat();
  }

  private clearHeartbeat(): void {
    const internals = this as unknown as SdkInternals;
    if (internals.heartbeatIntervallId !== undefined) clearInterval(internals.heartbeatIntervallId);
    internals.heartbeatIntervallId = undefined;
  }
}
