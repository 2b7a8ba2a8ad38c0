/**
 * Readiness and the paused server, through a whole gateway: `/readyz` is 503 until the channels
 * are loaded and connected, and webhooks answer 503 with Retry-After while the gateway starts
 * and while it drains, so platforms deliver again instead of meeting a 404 or a dropped message.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { AppConfigSchema } from "../../src/config/schema.js";
import { createGateway, type Gateway } from "../../src/gateway.js";
import { eventually, freePort, startTestGateway, type TestGateway, testLogger } from "../contract/gateway.js";
import { FakeDingTalk } from "../fakes/dingtalk/index.js";
import { LoopbackWorld } from "../fakes/loopback.js";
import { type MockModel, mockModelConfig, startMockModel } from "../fakes/openai.js";

let gateway: Gateway | undefined;
let model: MockModel | undefined;
let fake: FakeDingTalk | undefined;

afterEach(async () => {
  await gateway?.stop();
  await model?.close();
  await fake?.close();
  gateway = undefined;
  model = undefined;
  fake = undefined;
});

/** A gateway with a DingTalk HTTP callback (a real webhook route) and a loopback channel that connects only when released. */
async function build() {
  model = await startMockModel();
  fake = await FakeDingTalk.start();
  const slow = new LoopbackWorld();
  let release!: () => void;
  slow.startGate = new Promise((resolve) => {
    release = resolve;
  });
  const port = await freePort();
  const dir = mkdtempSync(path.join(tmpdir(), "antler-ready-"));
  const config = AppConfigSchema.parse({
    server: { host: "127.0.0.1", port },
    storage: { path: path.join(dir, "antler.db") },
    models: [{ ...mockModelConfig(model), max_retries: 0 }],
    channels: {
      dingtalk: {
        enabled: true,
        mode: "http",
        ...fake.connection(),
      },
      slow: slow.channelConfig(),
    },
  });
  gateway = createGateway({ loaded: { config, baseDir: dir }, logger: testLogger(), startWaitMs: 60_000, drainMs: 5_000 });
  const url = `http://127.0.0.1:${port}`;
  fake.callbackUrl = `${url}/dingtalk/dingtalk/callback`;
  return { gateway, model, fake, url, release };
}

interface ReadyBody {
  ready: boolean;
  state: string;
  waiting: string[];
  agent: { backend: string; target: string; reachable: boolean; problem: string | null } | null;
  problems: string[];
}

const readyz = async (url: string, headers: Record<string, string> = {}) => {
  const res = await fetch(`${url}/readyz`, { headers });
  return { status: res.status, body: (await res.json()) as ReadyBody };
};

describe("readiness", () => {
  it("is 503 with webhooks answering 503 + Retry-After until start() is done, then 200", async () => {
    const { gateway: g, model: m, fake: f, url, release } = await build();
    const starting = g.start();
    await eventually(async () => (await fetch(`${url}/healthz`)).status === 200, 10_000, "the server listening");
    expect(await readyz(url)).toMatchObject({ status: 503, body: { ready: false, state: "starting" } });
    // Before the channels are loaded their routes do not exist: still 503, not 404.
    const early = await fetch(`${url}/webhooks/not-mounted-yet`, { method: "POST", body: "{}" });
    expect(early.status).toBe(503);
    expect(early.headers.get("retry-after")).toBe("5");
    // DingTalk's route is mounted once it starts; the gateway still waits for the slow channel.
    await eventually(() => g.slot("dingtalk")?.report().state === "running", 10_000, "dingtalk started");
    const held = await f.userSays("sent during start-up");
    expect(held?.status).toBe(503);
    expect(await g.bindingStore?.unfinished()).toEqual([]);

    release();
    await starting;
    expect(await readyz(url)).toMatchObject({ status: 200, body: { ready: true, state: "running", waiting: [] } });
    expect((await fetch(`${url}/webhooks/not-mounted-yet`, { method: "POST", body: "{}" })).status).toBe(404);
    // The platform's redelivery now goes through and is answered.
    m.enqueue({ text: "answered after start-up" });
    await f.redeliverLast();
    await eventually(() => f.messagesIn(f.dmId()).some((msg) => msg.text === "answered after start-up"), 15_000, "the reply");
    expect(m.requests).toHaveLength(1);
  });

  it("goes 503 as soon as stop() begins: webhooks answer 503 + Retry-After during the drain", async () => {
    const { gateway: g, model: m, fake: f, url, release } = await build();
    release();
    await g.start();
    m.enqueue({ text: "a slow answer", firstByteMs: 1_500 });
    expect((await f.userSays("keeps a run going"))?.status).toBe(200);
    await eventually(() => m.requests.length === 1, 10_000, "the run started");

    const stopping = g.stop();
    expect(await readyz(url)).toMatchObject({ status: 503, body: { ready: false, state: "draining" } });
    const late = await f.userSays("sent during the drain");
    expect(late?.status).toBe(503);
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    await stopping;
    gateway = undefined;
    expect(m.requests).toHaveLength(1);
  });
});

describe("readiness and the model", () => {
  let gw: TestGateway | undefined;
  afterEach(async () => {
    await gw?.stop();
    gw = undefined;
  });

  it("is 200 with the mock model up, naming the agent it checked", async () => {
    const world = new LoopbackWorld();
    gw = await startTestGateway({ channels: { loop: world.channelConfig() } });
    expect(await readyz(gw.url)).toEqual({
      status: 200,
      body: {
        ready: true,
        state: "running",
        waiting: [],
        agent: { backend: "embedded", target: "model mock", reachable: true, problem: null },
        problems: [],
      },
    });
  });

  it("is 503 naming the model problem when the endpoint refuses connections, the URL only for the admin", async () => {
    const world = new LoopbackWorld();
    const port = await freePort();
    gw = await startTestGateway({
      channels: { loop: world.channelConfig() },
      modelConfig: { base_url: `http://127.0.0.1:${port}/v1` },
      server: { admin_token: "ready-token" },
    });
    const anyone = await readyz(gw.url);
    expect(anyone.status).toBe(503);
    expect(anyone.body).toMatchObject({ ready: false, state: "running", waiting: [], agent: { reachable: false } });
    expect(anyone.body.agent?.problem).toMatch(/^the model endpoint cannot be reached/);
    expect(anyone.body.problems).toEqual([anyone.body.agent?.problem]);
    expect(JSON.stringify(anyone.body)).not.toContain(String(port));

    const admin = await readyz(gw.url, { authorization: "Bearer ready-token" });
    expect(admin.status).toBe(503);
    expect(admin.body.agent?.problem).toMatch(
      new RegExp(
        `^model mock: http://127\\.0\\.0\\.1:${port}/v1/models is not reachable \\(connect ECONNREFUSED .*\\).*base_url`,
      ),
    );
    expect(admin.body.problems).toEqual([admin.body.agent?.problem]);
  });
});
