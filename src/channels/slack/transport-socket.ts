/**
 * Bolt's SocketModeReceiver, with one change: the envelope is acked after Bolt's listeners have
 * run (and so after the core recorded the message), not before. Bolt acks Events API envelopes
 * ahead of its listeners; a crash in between would lose the event, while a late ack only makes
 * Slack redeliver, which the core's dedupe absorbs. An envelope whose listeners fail is not acked.
 */
import { type App, type ReceiverEvent, type Logger as SlackLogger, SocketModeReceiver } from "@slack/bolt";
import type { Logger } from "../../log/logger.js";

export interface SocketReceiverOptions {
  appToken: string;
  apiUrl: string;
  sdkLogger: SlackLogger;
  logger: Logger;
  /** Called with true when the socket says hello, false when it closes or reconnects. */
  onConnection(connected: boolean, reason?: string): void;
}

interface SocketEventArgs {
  ack(response?: unknown): Promise<void>;
  body: Record<string, unknown>;
  retry_num?: number;
  retry_reason?: string;
}

/** A SocketModeReceiver bound to `app` with deferred acks and connection reporting. */
export function createSocketReceiver(options: SocketReceiverOptions, getApp: () => App | undefined): SocketModeReceiver {
  const receiver = new SocketModeReceiver({
    appToken: options.appToken,
    logger: options.sdkLogger,
    // No retries:0 here: the socket client gives up reconnecting for good on a failed
    // apps.connections.open unless its web client retries (its default), so keep that.
    installerOptions: { clientOptions: { slackApiUrl: options.apiUrl } },
  });
  const client = receiver.client;
  client.removeAllListeners("slack_event");
  client.on("slack_event", async (args: SocketEventArgs) => {
    let reply: unknown;
    const event: ReceiverEvent = {
      body: args.body,
      ack: async (response?: unknown) => {
        reply = response;
      },
      ...(args.retry_num !== undefined ? { retryNum: args.retry_num } : {}),
      ...(args.retry_reason ? { retryReason: args.retry_reason } : {}),
    };
    try {
      const app = getApp();
      if (!app) throw new Error("receiver not initialised by a Bolt App");
      await app.processEvent(event);
      await args.ack(reply === undefined || reply === "" ? undefined : reply);
    } catch (err) {
      options.logger.error({ err }, "slack envelope failed; leaving it unacked so Slack redelivers it");
    }
  });
  client.on("connected", () => options.onConnection(true));
  client.on("close", () => options.onConnection(false, "socket closed"));
  client.on("reconnecting", () => options.onConnection(false, "reconnecting"));
  client.on("disconnected", () => options.onConnection(false, "disconnected"));
  return receiver;
}
