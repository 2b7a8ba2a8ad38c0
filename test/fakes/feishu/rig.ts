/**
 * A Feishu adapter wired to the fake: the real SDK inside `FeishuChannel`, a real HttpServer on
 * port 0 for webhook mode, and a sink that records what the core would receive.
 */

import { FeishuChannelConfig } from "../../../src/channels/feishu/config.js";
import { FeishuChannel } from "../../../src/channels/feishu/index.js";
import type { InboundMessage } from "../../../src/channels/types.js";
import { refuseClick } from "../../../src/core/sinks.js";
import { createLogger, type Logger } from "../../../src/log/logger.js";
import { HttpServer } from "../../../src/server/http.js";
import { eventually } from "../../../src/testing/wait.js";
import { FakeFeishu } from "./index.js";
import type { WorldOptions } from "./state.js";

export interface Rig {
  fake: FakeFeishu;
  http: HttpServer;
  channel: FeishuChannel;
  inbox: InboundMessage[];
  /** Replaces the sink's behaviour (e.g. delay or fail) for the next messages. */
  onSink(fn: (m: InboundMessage) => Promise<void>): void;
  close(): Promise<void>;
}

export interface RigOptions {
  mode?: "websocket" | "webhook";
  fake?: Partial<WorldOptions>;
  /** Run against this fake (e.g. a contract driver's) instead of starting one. */
  useFake?: FakeFeishu;
  config?: Record<string, unknown>;
  /** Do not start the channel. */
  noStart?: boolean;
  /**
   * Acknowledge each recorded click as the core does once it took one (default true); false
   * leaves clicks unanswered, as when the core never decides in time.
   */
  answerClicks?: boolean;
  logger?: Logger;
}

export function rigLogger(): Logger {
  return createLogger({ level: process.env.ANTLER_TEST_LOG ?? "silent", format: "json" });
}

export async function startRig(options: RigOptions = {}): Promise<Rig> {
  const fake = options.useFake ?? (await new FakeFeishu(options.fake).start());
  const logger = options.logger ?? rigLogger();
  const http = new HttpServer({ host: "127.0.0.1", port: 0, logger });
  const addr = await http.listen();
  const o = fake.options;
  const config = FeishuChannelConfig.parse({
    mode: options.mode ?? "websocket",
    app_id: o.appId,
    app_secret: o.appSecret,
    api_base: fake.url,
    encrypt_key: o.encryptKey,
    verification_token: o.verificationToken,
    ...options.config,
  });
  const channel = new FeishuChannel({ name: "feishu", config, logger, http: http.mount("feishu"), baseDir: "." });
  const inbox: InboundMessage[] = [];
  let extra: ((m: InboundMessage) => Promise<void>) | undefined;
  fake.webhookTarget = `http://127.0.0.1:${addr.port}/webhooks/feishu`;
  fake.via = options.mode === "webhook" ? "webhook" : "ws";
  if (!options.noStart) {
    await channel.start(async (m) => {
      // As the core's sink does: a click from a user outside the access rules is refused, to them alone.
      if (await refuseClick(channel, channel.access, m, logger)) return;
      if (extra) await extra(m);
      inbox.push(m);
      if (m.action && options.answerClicks !== false) setImmediate(() => void channel.answerAction(m));
    });
  }
  return {
    fake,
    http,
    channel,
    inbox,
    onSink(fn) {
      extra = fn;
    },
    async close() {
      await channel.stop();
      await http.close();
      await fake.close();
    },
  };
}

export function waitFor<T>(check: () => T | undefined | false, timeoutMs = 5000, what = "condition"): Promise<T> {
  return eventually(check, timeoutMs, what);
}
