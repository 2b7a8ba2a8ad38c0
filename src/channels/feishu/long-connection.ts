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
    const { appId, appSecret, domain, logger } = this.options;
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
        this.reason = "the long connection is not up yet; the SDK keeps retrying";
        logger.warn(this.reason);
        this.options.onState?.(false, this.reason);
        settle();
      }, this.options.readyTimeoutMs ?? 15_000);
      this.client = new lark.WSClient({
        appId,
        appSecret,
        domain,
        logger: sdkLogger(logger),
        loggerLevel: lark.LoggerLevel.info,
        autoReconnect: true,
        handshakeTimeoutMs: 10_000,
        onReady: () => {
          this.reason = undefined;
          logger.info("feishu long connection ready");
          this.options.onState?.(true);
          settle();
        },
        onReconnecting: () => {
          this.reason = "the long connection dropped; reconnecting";
          logger.warn(this.reason);
          this.options.onState?.(false, this.reason);
        },
        onReconnected: () => {
          this.reason = undefined;
          logger.info("feishu long connection back");
          this.options.onState?.(true);
        },
        onError: (err: Error) => {
          this.reason = `long connection failed: ${errorMessage(err)}`;
          this.options.onError(new Error(this.reason));
          this.options.onState?.(false, this.reason);
          settle(new Error(this.reason));
        },
      });
      void this.client.start({ eventDispatcher: dispatcher });
    });
  }

  close(): void {
    this.abortStart?.(new Error("the long connection was closed (channel stopped) before it came up"));
    clearTimeout(this.timer);
    this.client?.close({ force: true });
    this.client = undefined;
  }
}
