/**
 * A tenant's admin token: it sees and restarts only its tenant's channels, reads only its usage
 * and MCP clients, and cannot read the server-wide metrics. The server's token sees everything.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway } from "../contract/gateway.js";
import { LoopbackWorld } from "../fakes/loopback.js";
import { configIssues } from "../helpers/config.js";

const SERVER = "server-token";
const A = "tenant-a-token";
const B = "tenant-b-token";

let gw: TestGateway;
const get = (path: string, token?: string, method = "GET") =>
  fetch(`${gw.url}${path}`, { method, headers: token ? { authorization: `Bearer ${token}` } : {} });
const names = async (res: Response) => ((await res.json()) as { channels: { name: string }[] }).channels.map((c) => c.name);

beforeAll(async () => {
  const one = new LoopbackWorld();
  const two = new LoopbackWorld();
  const three = new LoopbackWorld();
  gw = await startTestGateway({
    channels: { loopA: one.channelConfig(), loopB: two.channelConfig(), shared: three.channelConfig() },
    server: { admin_token: SERVER },
    sections: {
      tenants: { a: { channels: ["loopA"], admin_token: A }, b: { channels: ["loopB"], admin_token: B } },
    },
  });
  gw.gateway.metrics.usage({ tenant: "a", agent: "default" }, usage(10, 2));
  gw.gateway.metrics.usage({ tenant: "b", agent: "default" }, usage(30, 4));
});
afterAll(async () => {
  await gw.stop();
});

function usage(input: number, output: number) {
  return { kind: "chat" as const, model: "mock", inputTokens: input, outputTokens: output, totalTokens: input + output };
}

describe("admin API with tenant tokens", () => {
  it("lists only the tenant's channels; the server token lists all", async () => {
    expect(await names(await get("/api/channels", A))).toEqual(["loopA"]);
    expect(await names(await get("/api/channels", B))).toEqual(["loopB"]);
    expect(await names(await get("/api/channels", SERVER))).toEqual(["loopA", "loopB", "shared"]);
    expect((await get("/api/channels")).status).toBe(401);
    expect((await get("/api/channels", "wrong")).status).toBe(401);
  });

  it("answers 404 for another tenant's channel, to read or to restart", async () => {
    expect((await get("/api/channels/loopB", A)).status).toBe(404);
    expect((await get("/api/channels/shared", A)).status).toBe(404);
    expect((await get("/api/channels/loopB/restart", A, "POST")).status).toBe(404);
    expect(gw.gateway.report("loopB")?.state).toBe("running");
    expect((await get("/api/channels/loopA", A)).status).toBe(200);
    const restarted = await get("/api/channels/loopA/restart", A, "POST");
    expect(restarted.status).toBe(200);
    expect((await get("/api/channels/loopB", SERVER)).status).toBe(200);
  });

  it("reads only the tenant's usage, and not the metrics of every tenant", async () => {
    const own = (await (await get("/api/usage", A)).json()) as { rows: { tenant: string; input_tokens: number }[] };
    expect(own.rows.map((r) => [r.tenant, r.input_tokens])).toEqual([["a", 10]]);
    expect((await get("/api/usage?tenant=b", A)).status).toBe(403);
    const all = (await (await get("/api/usage", SERVER)).json()) as { rows: { tenant: string }[] };
    expect(all.rows.map((r) => r.tenant)).toEqual(["a", "b"]);
    expect((await get("/metrics", A)).status).toBe(403);
    expect((await get("/metrics", SERVER)).status).toBe(200);
  });

  it("shows only the tenant's agents and channels on /api/agent and the status page", async () => {
    const agent = (await (await get("/api/agent", B)).json()) as { agents: { tenant: string }[] };
    expect(agent.agents.map((a) => a.tenant)).toEqual(["b"]);
    const page = await (await get(`/?token=${A}`)).text();
    expect(page).toContain("loopA");
    expect(page).not.toContain("loopB");
  });
});

describe("tenant admin tokens in config", () => {
  it("refuses a tenant token equal to the server's or another tenant's", () => {
    const text = `server: { admin_token: s }\ntenants:\n  a: { admin_token: s }\n  b: { admin_token: t }\n  c: { admin_token: t }\n`;
    expect(configIssues(text)).toEqual([
      "tenants.a.admin_token: is the same as server.admin_token: each admin token must be its own",
      "tenants.c.admin_token: is the same as tenants.b.admin_token: each admin token must be its own",
    ]);
  });
});
