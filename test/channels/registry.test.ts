import path from "node:path";
import { describe, expect, it } from "vitest";
import { BUILTIN_CHANNELS, loadChannels } from "../../src/channels/registry.js";
import { ChannelSection } from "../../src/config/schema.js";
import { ConfigError } from "../../src/errors.js";
import { silentLogger } from "../../src/log/logger.js";
import { startTestGateway } from "../contract/gateway.js";
import { LoopbackWorld } from "../fakes/loopback.js";
import { ROOT } from "../helpers/cli.js";

const fixtures = path.join(ROOT, "test/fixtures/channels");
const options = { baseDir: fixtures, logger: silentLogger(), http: { mount: () => ({ route() {}, unroute() {} }) } };
const sections = (raw: Record<string, Record<string, unknown>>) =>
  Object.fromEntries(Object.entries(raw).map(([k, v]) => [k, ChannelSection.parse(v)]));

describe("channel registry", () => {
  it("loads a third-party channel class from a use: path relative to the config", async () => {
    const [slot] = await loadChannels(
      sections({ room: { enabled: true, use: "./third-party.mjs:EchoRoomChannel", room: "lobby" } }),
      options,
    );
    expect(slot?.channel?.name).toBe("room");
    expect(slot?.report()).toMatchObject({ state: "stopped", mode: "room:lobby", enabled: true });
  });

  it("names the methods a class lacks", async () => {
    const [slot] = await loadChannels(sections({ half: { enabled: true, use: "./third-party.mjs:HalfChannel" } }), options);
    expect(slot?.report().state).toBe("failed");
    expect(slot?.report().reason).toContain("it lacks stop(), send(), edit()");
  });

  it("reports a disabled channel with the reason and never loads it", async () => {
    const [slot] = await loadChannels(sections({ telegram: { enabled: false, bot_token: 42 } }), options);
    expect(slot?.channel).toBeUndefined();
    expect(slot?.report()).toMatchObject({ state: "disabled", reason: "channels.telegram.enabled is false" });
  });

  it("asks for use: when a name is not built in", async () => {
    const err = await loadChannels(sections({ matrix: { enabled: true } }), options).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).issues[0]?.path).toBe("channels.matrix.use");
  });

  it("checks a built-in channel's keys with its schema and names the key", async () => {
    const err = await loadChannels(sections({ telegram: { enabled: true, bot_tokn: "x" } }), options).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).issues.map((i) => i.path)).toContain("channels.telegram.bot_tokn");
  });

  it("knows every built-in adapter", () => {
    expect(Object.keys(BUILTIN_CHANNELS).sort()).toEqual([
      "console",
      "dingtalk",
      "discord",
      "feishu",
      "lark",
      "slack",
      "telegram",
      "web",
    ]);
  });

  it("starts the other channels when one lacks its credentials, and says what is missing", async () => {
    const world = new LoopbackWorld();
    const gw = await startTestGateway({ channels: { telegram: { enabled: true }, loop: world.channelConfig() } });
    try {
      expect(gw.gateway.report("loop")?.state).toBe("running");
      const telegram = gw.gateway.report("telegram");
      expect(telegram?.state).toBe("failed");
      expect(telegram?.reason).toContain("channels.telegram.bot_token is required");
      gw.model.enqueue({ text: "still answering" });
      await world.userSays("hello");
      await expect.poll(() => world.botMessages().map((m) => m.text)).toContain("still answering");
    } finally {
      await gw.stop();
    }
  });
});
