/**
 * The operator's view of the agent backend: GET /api/agent, the agent line of `antler status`,
 * and `antler doctor`'s check of a user's graph and of a remote server.
 */
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { parseConfig } from "../../src/config/loader.js";
import { runDoctor } from "../../src/doctor.js";
import { MESSAGES } from "../../src/harness/run-errors.js";
import type { AgentStatus } from "../../src/harness/types.js";
import { eventually, freePort, startTestGateway, type TestGateway } from "../contract/gateway.js";
import { LoopbackWorld, shownText } from "../fakes/loopback.js";
import { memoryLogger } from "../harness/helpers.js";
import { runCli } from "../helpers/cli.js";

const TOKEN = "agent-status-token";
const auth = { authorization: `Bearer ${TOKEN}` };
let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.stop();
  gw = undefined;
});

async function agentStatus(): Promise<{ status: number; body: AgentStatus }> {
  const res = await fetch(`${gw!.url}/api/agent`, { headers: auth });
  return { status: res.status, body: (await res.json()) as AgentStatus };
}

describe("GET /api/agent", () => {
  it("embedded: the model it runs, and the last model failure", async () => {
    const world = new LoopbackWorld();
    gw = await startTestGateway({ channels: { loop: world.channelConfig() }, server: { admin_token: TOKEN } });
    expect((await fetch(`${gw.url}/api/agent`)).status).toBe(401);
    const healthy = { backend: "embedded", target: "model mock", reachable: true, last_error: null };
    // The default agent's fields, and every agent instance by tenant.
    expect(await agentStatus()).toEqual({
      status: 200,
      body: { ...healthy, agents: [{ tenant: "default", agent: "default", ...healthy }] },
    });
    gw.model.enqueue({ fault: "http401" });
    await world.userSays("hello");
    await eventually(
      () => world.botMessages().some((m) => shownText(m.text).includes(MESSAGES.auth)),
      10_000,
      "the credentials notice",
    );
    const { body } = await agentStatus();
    expect(body.last_error?.message).toBe(MESSAGES.auth);
  });

  it("remote, server down: not reachable, the chat gets a notice, antler status says so and exits 1", async () => {
    const world = new LoopbackWorld();
    const url = `http://127.0.0.1:${await freePort()}`;
    gw = await startTestGateway({
      channels: { loop: world.channelConfig() },
      server: { admin_token: TOKEN },
      agent: { backend: "remote", remote: { url, assistant_id: "agent", api_key: "remote-secret-key" } },
    });
    const { body } = await agentStatus();
    expect(body).toMatchObject({ backend: "remote", target: `${url} assistant agent`, reachable: false });
    expect(body.last_error?.message).toMatch(/is not reachable/);

    await world.userSays("are you there?");
    await eventually(() => world.botMessages().some((m) => m.text.includes(MESSAGES.agentUnreachable)), 15_000, "the notice");

    const { code, output } = await runCli(["status", "--url", gw.url, "--token", TOKEN]);
    expect(code).toBe(1);
    expect(output).toMatch(
      new RegExp(`agent: remote ${url} assistant agent \\(NOT reachable\\); last error .* is not reachable`),
    );
    expect(output).not.toContain("remote-secret-key");
  });
});

describe("antler doctor and the agent backend", () => {
  const fixtures = path.join(import.meta.dirname, "../harness/fixtures");
  const configWith = (agent: Record<string, unknown>) => ({
    config: parseConfig(stringify({ storage: { path: "/tmp/antler-doctor-unused.db" }, agent }), {}),
    baseDir: fixtures,
    path: path.join(fixtures, "config.yaml"),
  });

  it("loads a user's graph, and names a bad one", async () => {
    const { logger } = memoryLogger();
    const ok = await runDoctor(configWith({ backend: "graph", graph: "./user-graphs.ts:publish" }), logger);
    expect(ok.at(-1)).toEqual({
      ok: true,
      subject: "agent graph",
      detail: "./user-graphs.ts:publish loads and is a compiled graph",
    });
    const bad = await runDoctor(configWith({ backend: "graph", graph: "./user-graphs.ts:notAGraph" }), logger);
    expect(bad.at(-1)).toMatchObject({ ok: false, subject: "agent graph" });
    expect(bad.at(-1)?.detail).toMatch(/is not a compiled graph/);
  });

  it("reports a remote server it cannot reach", async () => {
    const url = `http://127.0.0.1:${await freePort()}`;
    const lines = await runDoctor(
      configWith({ backend: "remote", remote: { url, assistant_id: "agent" } }),
      memoryLogger().logger,
    );
    expect(lines.at(-1)).toMatchObject({ ok: false, subject: "agent remote" });
    expect(lines.at(-1)?.detail).toMatch(new RegExp(`${url} is not reachable`));
  });
});
