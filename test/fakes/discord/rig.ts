/**
 * Adapter-level test rig: a real DiscordChannel against the fake Discord, with a sink that
 * collects what the adapter hands to the core. Discord needs no webhook, so there is no server.
 */
import { DiscordChannel, DiscordChannelConfig } from "../../../src/channels/discord/index.js";
import type { InboundMessage } from "../../../src/channels/types.js";
import { silentLogger } from "../../../src/log/logger.js";
import { FakeDiscord, type FakeOptions } from "./index.js";

export interface Rig {
  fake: FakeDiscord;
  channel: DiscordChannel;
  inbox: InboundMessage[];
  close(): Promise<void>;
}

/** Starts the adapter against a new fake, or against `existing` (a driver's), which `close` then stops too. */
export async function startRig(
  config: Record<string, unknown> = {},
  options: FakeOptions = {},
  existing?: FakeDiscord,
): Promise<Rig> {
  const fake = existing ?? (await FakeDiscord.start(options));
  const parsed = DiscordChannelConfig.parse({
    bot_token: fake.token,
    api_base: fake.apiBase,
    gateway_url: fake.gatewayUrl,
    ...config,
  });
  const channel = new DiscordChannel({
    name: "discord",
    config: parsed,
    logger: silentLogger(),
    http: { route() {}, unroute() {} },
    baseDir: ".",
  });
  const inbox: InboundMessage[] = [];
  await channel.start(async (m) => {
    inbox.push(m);
  });
  return {
    fake,
    channel,
    inbox,
    async close() {
      await channel.stop();
      await fake.close();
    },
  };
}
