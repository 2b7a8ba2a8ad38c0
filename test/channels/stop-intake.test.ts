/**
 * `stopIntake` on every exclusive adapter, against its platform's fake: the poll loop or socket
 * ends at once (the fake sees no open connection), while a reply that was streaming still ends
 * through the channel's send path. This is what lets a replica hand its bot over mid-reply.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { ContractDriver } from "../../src/testing/driver.js";
import { eventually, freePort, startTestGateway, type TestGateway } from "../../src/testing/gateway.js";
import { dingTalkDriver } from "../fakes/dingtalk/driver.js";
import { discordDriver } from "../fakes/discord/driver.js";
import { FeishuDriver } from "../fakes/feishu/driver.js";
import { SlackDriver } from "../fakes/slack/driver.js";
import { TelegramDriver } from "../fakes/telegram/driver.js";
import { gatedAgent } from "../helpers/gated-agent.js";

interface Case {
  name: string;
  driver: () => Promise<ContractDriver>;
  /** Intake connections the fake has open now (sockets; for Telegram, a getUpdates in progress). */
  open: (driver: ContractDriver) => number;
}

const CASES: Case[] = [
  {
    name: "telegram (polling)",
    driver: () => TelegramDriver.start({ mode: "polling" }),
    open: (d) => {
      const fake = (d as TelegramDriver).fake;
      const polls = fake.calls.filter((c) => c.method === "getUpdates");
      return polls.filter((c) => c.handed === undefined && c.status === 200).length;
    },
  },
  {
    name: "slack (socket mode)",
    driver: () => SlackDriver.start({ mode: "socket", conversation: "dm" }),
    open: (d) => (d as SlackDriver).fake.socket.open,
  },
  {
    name: "feishu (websocket)",
    driver: () => FeishuDriver.start({ mode: "websocket" }),
    open: (d) => (d as FeishuDriver).fake.ws.connected,
  },
  {
    name: "dingtalk (stream)",
    driver: () => dingTalkDriver({ mode: "stream", cards: true, scope: "user" }),
    open: (d) => ((d as Awaited<ReturnType<typeof dingTalkDriver>>).fake.gateway.connected ? 1 : 0),
  },
  {
    name: "discord (gateway)",
    driver: () => discordDriver({ thread: true }),
    open: (d) => (d as Awaited<ReturnType<typeof discordDriver>>).fake.gateway.connected,
  },
];

let gw: TestGateway | undefined;
let driver: ContractDriver | undefined;
afterEach(async () => {
  await gw?.stop();
  await driver?.close();
  gw = undefined;
  driver = undefined;
}, 30_000);

describe.each(CASES)("stopIntake: $name", (c) => {
  it("ends the intake at once and keeps the send path for the reply in progress", async () => {
    driver = await c.driver();
    const agent = gatedAgent();
    const port = await freePort();
    const channels = { [driver.channelName]: driver.channelConfig({ gatewayUrl: `http://127.0.0.1:${port}` }) };
    gw = await startTestGateway({ channels, harness: agent.harness, port });
    const d = driver;
    await eventually(() => c.open(d) > 0, 15_000, "the intake connection");
    await d.userSays("hello");
    await eventually(() => d.botMessages().some((m) => m.text === "Part one."), 15_000, "the first part of the reply");

    const channel = gw.gateway.slot(d.channelName)?.channel;
    expect(channel?.exclusive).toBe(true);
    await channel?.stopIntake?.();
    await eventually(() => c.open(d) === 0, 10_000, "the intake closed");
    expect(channel?.status()).toMatchObject({
      state: "degraded",
      connected: false,
      reason: expect.stringMatching(/handed over/),
    });

    agent.open();
    await eventually(() => d.botMessages().some((m) => m.text === "Part one. Part two."), 15_000, "the rest of the reply");
    // Nothing reconnected the intake meanwhile.
    expect(c.open(d)).toBe(0);
  });
});
