/**
 * The operator's view: admin API auth, channel states with the real error, restart, supervisor,
 * counters and metrics after a conversation.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { ChannelReport } from "../../src/channels/registry.js";
import { PlatformAuthError } from "../../src/errors.js";
import { isLoopback, tokenMatches } from "../../src/server/auth.js";
import { eventually, startTestGateway, type TestGateway } from "../contract/gateway.js";
import { type LoopbackChannel, LoopbackWorld } from "../fakes/loopback.js";
import { runCli } from "../helpers/cli.js";

const TOKEN = "admin-token-for-tests";
let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.stop();
  gw = undefined;
});

const auth = { authorization: `Bearer ${TOKEN}` };

async function api(path: string, init: RequestInit = {}) {
  const res = await fetch(`${gw!.url}${path}`, init);
  return { status: res.status, body: res.headers.get("content-type")?.includes("json") ? await res.json() : await res.text() };
}

describe("admin API", () => {
  it("needs the admin token: 401 without it or with a wrong one", async () => {
    const world = new LoopbackWorld();
    gw = await startTestGateway({ channels: { loop: world.channelConfig() }, server: { admin_token: TOKEN } });
    expect((await api("/api/channels")).status).toBe(401);
    expect((await api("/api/channels", { headers: { authorization: "Bearer nope" } })).status).toBe(401);
    expect((await api("/metrics")).status).toBe(401);
    const ok = await api("/api/channels", { headers: auth });
    expect(ok.status).toBe(200);
    expect((ok.body as { channels: ChannelReport[] }).channels.map((c) => [c.name, c.state])).toEqual([["loop", "running"]]);
    expect((await api("/healthz")).status).toBe(200);
  });

  it("answers loopback without a token", async () => {
    const world = new LoopbackWorld();
    gw = await startTestGateway({ channels: { loop: world.channelConfig() } });
    expect((await api("/api/channels/loop")).status).toBe(200);
    expect((await api("/api/channels/nope")).status).toBe(404);
    expect(isLoopback("127.0.0.1") && isLoopback("::ffff:127.0.0.5") && isLoopback("::1")).toBe(true);
    expect(isLoopback("10.0.0.1") || isLoopback("::ffff:192.168.1.2") || isLoopback(undefined)).toBe(false);
    expect(tokenMatches("abc", "abc")).toBe(true);
    expect(tokenMatches("abd", "abc")).toBe(false);
  });

  it("shows a channel the platform rejects as failed with that error; restart brings it back once fixed", async () => {
    const bad = new LoopbackWorld();
    bad.startError = () => new PlatformAuthError("bad", "401 Unauthorized: the bot token was revoked");
    const good = new LoopbackWorld();
    gw = await startTestGateway({
      channels: { bad: bad.channelConfig(), good: good.channelConfig(), off: { enabled: false } },
      supervisor: { baseDelayMs: 60_000 },
    });
    const report = (await api("/api/channels/bad")).body as ChannelReport;
    expect(report.state).toBe("failed");
    expect(report.last_error?.message).toContain("the bot token was revoked");
    expect(report.reason).toContain("the bot token was revoked");
    expect(((await api("/api/channels/good")).body as ChannelReport).state).toBe("running");
    expect(((await api("/api/channels/off")).body as ChannelReport).state).toBe("disabled");
    expect((await api("/readyz")).status).toBe(503);

    bad.startError = undefined;
    const restarted = await api("/api/channels/bad/restart", { method: "POST" });
    expect(restarted.status).toBe(200);
    expect((restarted.body as ChannelReport).state).toBe("running");
    expect((await api("/readyz")).status).toBe(200);
  });

  it("does not let a channel that is slow to connect hold up the others", async () => {
    const slow = new LoopbackWorld();
    let release!: () => void;
    slow.startGate = new Promise((resolve) => {
      release = resolve;
    });
    const fast = new LoopbackWorld();
    const started = Date.now();
    gw = await startTestGateway({ channels: { slow: slow.channelConfig(), fast: fast.channelConfig() }, startWaitMs: 300 });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(((await api("/api/channels/slow")).body as ChannelReport).state).toBe("starting");
    expect(((await api("/api/channels/fast")).body as ChannelReport).state).toBe("running");
    gw.model.enqueue({ text: "fast answers" });
    await fast.userSays("hi");
    await eventually(() => fast.botMessages().some((m) => m.text === "fast answers"));
    release();
    await eventually(async () => ((await api("/api/channels/slow")).body as ChannelReport).state === "running");
  });

  it("the supervisor restarts a channel that failed at run time, with backoff", async () => {
    const world = new LoopbackWorld();
    gw = await startTestGateway({ channels: { loop: world.channelConfig() }, supervisor: { baseDelayMs: 100, pollMs: 25 } });
    expect(world.starts).toBe(1);
    world.startError = () => new Error("platform unreachable");
    (gw.gateway.slot("loop")!.channel as LoopbackChannel).fail("socket closed");
    await eventually(() => world.starts >= 3, 5_000, "two restart attempts");
    const failing = (await api("/api/channels/loop")).body as ChannelReport;
    expect(failing.state).toBe("failed");
    expect(failing.last_error?.message).toBe("platform unreachable");
    world.startError = undefined;
    await eventually(async () => ((await api("/api/channels/loop")).body as ChannelReport).state === "running", 5_000);
  });

  it("counts a conversation in the report and in /metrics", async () => {
    const world = new LoopbackWorld();
    gw = await startTestGateway({ channels: { loop: world.channelConfig() } });
    gw.model.enqueue({ text: "counted reply", chunkSize: 5, delayMs: 5 });
    await world.userSays("count me");
    await eventually(() => world.botMessages().some((m) => m.text === "counted reply"));
    const report = await eventually(async () => {
      const r = (await api("/api/channels/loop")).body as ChannelReport;
      return r.counters.replies === 1 ? r : undefined;
    });
    expect(report.counters).toMatchObject({ inbound: 1, runs: 1, replies: 1, errors: 0 });
    expect(report.last_inbound_at).not.toBeNull();
    expect(report.last_outbound_at).not.toBeNull();
    const metrics = (await api("/metrics")).body as string;
    expect(metrics).toMatch(/antler_inbound_messages_total\{channel="loop"\} 1/);
    expect(metrics).toMatch(/antler_runs_total\{channel="loop",outcome="done"\} 1/);
    expect(metrics).toMatch(/antler_first_visible_text_seconds_count\{channel="loop"\} 1/);
    expect(metrics).toMatch(/antler_platform_api_calls_total\{channel="loop",kind="send"\} \d+/);
    expect(metrics).toMatch(/antler_active_runs 0/);
  });

  it("two restarts at once leave exactly one connected instance of the channel", async () => {
    const world = new LoopbackWorld();
    gw = await startTestGateway({ channels: { loop: world.channelConfig() }, server: { admin_token: TOKEN } });
    expect(world.live.size).toBe(1);
    let open!: () => void;
    world.startGate = new Promise<void>((resolve) => {
      open = resolve;
    });
    const restart = () => api("/api/channels/loop/restart", { method: "POST", headers: auth });
    const both = Promise.all([restart(), restart()]);
    await new Promise((r) => setTimeout(r, 100));
    open();
    const answers = await both;
    expect(answers.map((a) => (a.body as ChannelReport).state)).toEqual(["running", "running"]);
    expect(world.live.size).toBe(1);
    expect([...world.live][0]).toBe(gw.gateway.slot("loop")?.channel);
  });

  it("never shows a configured secret in a report, even when a platform error quotes it", async () => {
    const secret = "123456:very-secret-bot-token";
    const world = new LoopbackWorld();
    world.startError = () => new Error(`request to https://api.example/bot${secret}/getMe failed`);
    gw = await startTestGateway({
      channels: { loop: world.channelConfig({ bot_token: secret }) },
      server: { admin_token: TOKEN },
      supervisor: { baseDelayMs: 60_000 },
    });
    const report = (await api("/api/channels/loop", { headers: auth })).body as ChannelReport;
    expect(report.state).toBe("failed");
    expect(report.reason).toContain("getMe failed");
    const everything = [
      JSON.stringify(report),
      JSON.stringify((await api("/api/channels", { headers: auth })).body),
      (await api("/", { headers: auth })).body as string,
    ];
    for (const text of everything) expect(text).not.toContain(secret);
  });
});

describe("antler status", () => {
  it("prints the running gateway's channels as a table, with the failure reason", async () => {
    const ok = new LoopbackWorld();
    const bad = new LoopbackWorld();
    bad.startError = () => new PlatformAuthError("bad", "401 Unauthorized: token revoked");
    gw = await startTestGateway({
      channels: { good: ok.channelConfig(), bad: bad.channelConfig() },
      server: { admin_token: TOKEN },
      supervisor: { baseDelayMs: 60_000 },
    });
    const denied = await runCli(["status", "--url", gw.url, "--token", "wrong"]);
    expect(denied.code).toBe(1);
    expect(denied.output).toContain("HTTP 401");
    const { code, output } = await runCli(["status", "--url", gw.url, "--token", TOKEN]);
    expect(code).toBe(1);
    const lines = output.trim().split("\n");
    expect(lines[0]).toMatch(/^CHANNEL\s+STATE\s+CONN\s+MODE/);
    expect(lines.find((l) => l.startsWith("good"))).toMatch(/^good\s+running\s+yes\s+memory/);
    expect(lines.find((l) => l.startsWith("bad"))).toMatch(/^bad\s+failed\s+no\s+.*token revoked/);
  });
});
