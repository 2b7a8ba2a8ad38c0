/**
 * Adapter-level test rig: a real TelegramChannel on a real HttpServer (port 0) against the
 * fake Bot API, with a sink that collects what the adapter hands to the core.
 */
import { TelegramChannel, TelegramChannelConfig } from "../../../src/channels/telegram/index.js";
import type { InboundMessage } from "../../../src/channels/types.js";
import { refuseClick } from "../../../src/core/sinks.js";
import { silentLogger } from "../../../src/log/logger.js";
import { HttpServer } from "../../../src/server/http.js";
import { eventually } from "../../../src/testing/wait.js";
import { FakeTelegram, type FakeTelegramOptions } from "./index.js";

export interface Rig {
  fake: FakeTelegram;
  http: HttpServer;
  channel: TelegramChannel;
  inbox: InboundMessage[];
  /** Replace to make the sink fail or slow down. */
  sink: (m: InboundMessage) => Promise<void>;
  baseUrl: string;
  close(): Promise<void>;
}

/** Channel config keys, or a function of the rig's address (for a webhook URL). */
export type RigConfig = Record<string, unknown> | ((env: { gatewayUrl: string }) => Record<string, unknown>);

export interface RigOptions extends FakeTelegramOptions {
  /** false: build the channel without starting it. */
  start?: boolean;
  /** Run against this fake (e.g. a contract driver's) instead of starting one. */
  fake?: FakeTelegram;
}

export async function startRig(config: RigConfig = {}, options: RigOptions = {}) {
  const fake = options.fake ?? (await FakeTelegram.start(options));
  const http = new HttpServer({ host: "127.0.0.1", port: 0, logger: silentLogger() });
  const addr = await http.listen();
  const baseUrl = `http://127.0.0.1:${addr.port}`;
  // `enabled` is the core's key, read before the channel's schema.
  const { enabled: _, ...keys } = typeof config === "function" ? config({ gatewayUrl: baseUrl }) : config;
  const parsed = TelegramChannelConfig.parse({ bot_token: fake.token, api_base: fake.apiRoot, ...keys });
  const channel = new TelegramChannel({
    name: "telegram",
    config: parsed,
    logger: silentLogger(),
    http: http.mount("telegram"),
    baseDir: ".",
  });
  const inbox: InboundMessage[] = [];
  const rig: Rig = {
    fake,
    http,
    channel,
    inbox,
    baseUrl,
    sink: async (m) => {
      inbox.push(m);
      // As the core does once it took a click: the held query gets its plain answer.
      if (m.action) setImmediate(() => void channel.answerAction(m));
    },
    async close() {
      await channel.stop();
      await http.close();
      await fake.close();
    },
  };
  // As the core's sink does: a click from a user outside the access rules is refused, to them alone.
  const sink = async (m: InboundMessage) => {
    if (!(await refuseClick(channel, channel.access, m, silentLogger()))) await rig.sink(m);
  };
  if (options.start !== false) await channel.start(sink);
  return rig;
}

export function waitFor<T>(check: () => T | undefined | null | false, timeoutMs = 5000, what = "condition"): Promise<T> {
  return eventually(check, timeoutMs, what);
}

export const alice = { id: 1001, first_name: "Alice", username: "alice" };
export const bob = { id: 1002, first_name: "Bob", username: "bob" };
export const GROUP = { id: -100200300, type: "supergroup" as const };
export const FORUM = { id: -100400500, type: "supergroup" as const, isForum: true };
