/**
 * The SDK's long connection (`WSClient`), wrapped so that `start()` waits until the socket is
 * up (or the platform refused it) and status can tell whether it is connected right now.
 */
import * as lark from "@larksuiteoapi/node-sdk";
import { errorMessage } from "../../errors.js";
import type { Logger } from "../../log/logger.js";
import { sdkLogger } from "./sdk-logger.js";

export interface LongConnectionOptions {
  appId: string;
  appSecret: string;
  domain: lark.Domain | string;
  logger: Logger;
  /** How long `start()` waits for the first connection before going on in the background. */
  readyTimeoutMs?: number;
  onError(err: Error): void;
  /** The connection came up (true) or went down (false, with why). */
  onState?(up: boolean, reason?: string): void;
}

export class LongConnection {
  /** Why the connection is not up, when it is not. */
  reason: string | undefined;
  private client: lark.WSClient | undefined;
  private timer: NodeJS.Timeout | undefined;
  /** Ends a `start()` still waiting for the first connection. */
  private abortStart: ((err: Error) => void) | undefined;

  constructor(private readonly options: LongConnectionOptions) {}

  get connected(): boolean {
    return this.client?.getConnectionStatus().state === "connected";
  }

  /**
   * Connects. Resolves once connected, or after `readyTimeoutMs` while the SDK keeps retrying
   * (status says so); rejects when the platform refuses the connection for good.
   */
  start(dispatcher: lark.EventDispatcher): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      let settled = false;
      const settle = (err?: Error) => {
        if (settled) return;
        settled = true;
        this.abortStart = undefined;
        clearTimeout(this.timer);
        if (err) reject(err);
        else resolve();
      };
      this.abortStart = settle;
      this.timer = setTimeout(() => {
        this.down("the long connection is not up yet; the SDK keeps retrying");
        settle();
      }, this.options.readyTimeoutMs ?? 15_000);
      this.client = this.createClient(settle);
      void this.client.start({ eventDispatcher: dispatcher });
    });
  }

  /** The SDK's client, reconnecting by itself; its first connection (or a refusal) settles `start`. */
  private createClient(settle: (err?: Error) => void): lark.WSClient {
    const { appId, appSecret, domain, logger } = this.options;
    return new lark.WSClient({
      appId,
      appSecret,
      domain,
      logger: sdkLogger(logger),
      loggerLevel: lark.LoggerLevel.info,
      autoReconnect: true,
      handshakeTimeoutMs: 10_000,
      onReady: () => {
        this.up("feishu long connection ready");
        settle();
      },
      onReconnecting: () => this.down("the long connection dropped; reconnecting"),
      onReconnected: () => this.up("feishu long connection back"),
      onError: (err: Error) => {
        this.reason = `long connection failed: ${errorMessage(err)}`;
        this.options.onError(new Error(this.reason));
        this.options.onState?.(false, this.reason);
        settle(new Error(this.reason));
      },
    });
  }

  private up(message: string): void {
    this.reason = undefined;
    this.options.logger.info(message);
    this.options.onState?.(true);
  }

  private down(reason: string): void {
    this.reason = reason;
    this.options.logger.warn(reason);
    this.options.onState?.(false, reason);
  }

  close(): void {
    this.abortStart?.(new Error("the long connection was closed (channel stopped) before it came up"));
    clearTimeout(this.timer);
    this.client?.close({ force: true });
    this.client = undefined;
  }
}
