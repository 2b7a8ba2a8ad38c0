/**
 * Model usage for operators: the ledger's rows and totals, the Prometheus counters, and
 * `GET /api/usage` (admin token, `?tenant=`), fed by harnesses running on the mock model.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type AgentHarness, createHarness } from "../../src/harness/index.js";
import type { ModelUsage } from "../../src/harness/usage.js";
import { mountAdmin } from "../../src/ops/admin.js";
import { GatewayMetrics } from "../../src/ops/metrics.js";
import { UsageLedger, type UsageSnapshot } from "../../src/ops/usage.js";
import { HttpServer } from "../../src/server/http.js";
import { testLogger } from "../contract/gateway.js";
import { type MockModel, type MockUsage, startMockModel } from "../fakes/openai.js";
import { collect, configFor, tempDir } from "../harness/helpers.js";

const TOKEN = "usage-admin-token";
const auth = { authorization: `Bearer ${TOKEN}` };

const usage = (prompt: number, completion: number): MockUsage => ({
  prompt_tokens: prompt,
  completion_tokens: completion,
  total_tokens: prompt + completion,
});

const call = (kind: ModelUsage["kind"], model: string, input: number, output: number): ModelUsage => ({
  kind,
  model,
  inputTokens: input,
  outputTokens: output,
  totalTokens: input + output,
});

describe("UsageLedger", () => {
  it("sums calls per tenant, agent, model and kind, sorted, with totals and a tenant filter", () => {
    const ledger = new UsageLedger();
    ledger.record({ tenant: "b", agent: "x" }, call("chat", "m", 1, 2));
    ledger.record({ tenant: "a", agent: "y" }, call("summarization", "m", 10, 1));
    ledger.record({ tenant: "a", agent: "y" }, call("chat", "m", 3, 4));
    ledger.record({ tenant: "a", agent: "y" }, call("chat", "m", 5, 6));
    ledger.record({ tenant: "a", agent: "y" }, call("title", "m", 7, 1));
    const all = ledger.snapshot();
    expect(Date.parse(all.since)).toBeLessThanOrEqual(Date.now());
    expect(all.rows.map((r) => [r.tenant, r.kind, r.calls, r.input_tokens, r.output_tokens, r.total_tokens])).toEqual([
      ["a", "chat", 2, 8, 10, 18],
      ["a", "title", 1, 7, 1, 8],
      ["a", "summarization", 1, 10, 1, 11],
      ["b", "chat", 1, 1, 2, 3],
    ]);
    expect(all.totals).toEqual({ calls: 5, input_tokens: 26, output_tokens: 14, total_tokens: 40 });
    expect(ledger.snapshot({ tenant: "b" }).totals).toEqual({ calls: 1, input_tokens: 1, output_tokens: 2, total_tokens: 3 });
    expect(ledger.snapshot({ tenant: "nobody" })).toMatchObject({ rows: [], totals: { calls: 0, total_tokens: 0 } });
  });
});

describe("GET /api/usage and /metrics", () => {
  let mock: MockModel;
  let server: HttpServer;
  let metrics: GatewayMetrics;
  let url: string;
  const harnesses: AgentHarness[] = [];

  beforeEach(async () => {
    mock = await startMockModel();
    metrics = new GatewayMetrics({ queueDepth: () => 0, activeRuns: () => 0 });
    server = new HttpServer({ host: "127.0.0.1", port: 0, logger: testLogger() });
    const source = {
      reports: () => [],
      report: () => undefined,
      restart: async () => undefined,
      mcpReports: () => [],
      agentStatus: async () => undefined,
      agentStatuses: async () => [],
      tenantOf: () => "default",
      replicas: async () => [],
      metrics,
      startedAt: Date.now(),
      speaker: undefined,
    };
    mountAdmin(server, source, { adminToken: TOKEN, version: "test" });
    url = `http://127.0.0.1:${(await server.listen()).port}`;
  });
  afterEach(async () => {
    for (const h of harnesses.splice(0)) await h.close();
    await server.close();
    await mock.close();
  });

  /** A harness on the mock whose usage the metrics count for `tenant` and `agent`. */
  async function agentOf(tenant: string, agent: string, extra: Record<string, unknown> = {}): Promise<AgentHarness> {
    const harness = await createHarness({
      config: configFor(mock, extra),
      baseDir: tempDir(),
      logger: testLogger(),
      onUsage: (u) => metrics.usage({ tenant, agent }, u),
    });
    harnesses.push(harness);
    return harness;
  }

  async function getUsage(query = ""): Promise<{ status: number; body: UsageSnapshot }> {
    const res = await fetch(`${url}/api/usage${query}`, { headers: auth });
    return { status: res.status, body: (await res.json()) as UsageSnapshot };
  }

  it("counts exactly what the mock reported, per tenant, agent and kind; ?tenant= narrows it", async () => {
    const support = await agentOf("acme", "support", { agent: { features: { title: true } } });
    const research = await agentOf("globex", "research");
    mock.enqueue({ text: "Hello.", usage: usage(12, 4) }, { text: "Greeting", usage: usage(30, 2) });
    await collect(support.run("t1", "hi"));
    mock.enqueue({ text: "Again.", usage: usage(20, 3) });
    await collect(support.run("t1", "hi again"));
    mock.enqueue({ text: "Found it.", usage: usage(100, 50) });
    await collect(research.run("t2", "search"));

    const all = await getUsage();
    expect(all.status).toBe(200);
    expect(all.body.rows).toEqual([
      {
        tenant: "acme",
        agent: "support",
        model: "mock",
        kind: "chat",
        calls: 2,
        input_tokens: 32,
        output_tokens: 7,
        total_tokens: 39,
      },
      {
        tenant: "acme",
        agent: "support",
        model: "mock",
        kind: "title",
        calls: 1,
        input_tokens: 30,
        output_tokens: 2,
        total_tokens: 32,
      },
      {
        tenant: "globex",
        agent: "research",
        model: "mock",
        kind: "chat",
        calls: 1,
        input_tokens: 100,
        output_tokens: 50,
        total_tokens: 150,
      },
    ]);
    expect(all.body.totals).toEqual({ calls: 4, input_tokens: 162, output_tokens: 59, total_tokens: 221 });

    const acme = await getUsage("?tenant=acme");
    expect(acme.body.rows.map((r) => [r.tenant, r.kind])).toEqual([
      ["acme", "chat"],
      ["acme", "title"],
    ]);
    expect(acme.body.totals).toEqual({ calls: 3, input_tokens: 62, output_tokens: 9, total_tokens: 71 });

    const scrape = await (await fetch(`${url}/metrics`, { headers: auth })).text();
    const labels = 'tenant="acme",agent="support",model="mock"';
    expect(scrape).toContain(`antler_model_tokens_total{${labels},kind="chat",type="input"} 32`);
    expect(scrape).toContain(`antler_model_tokens_total{${labels},kind="chat",type="output"} 7`);
    expect(scrape).toContain(`antler_model_tokens_total{${labels},kind="title",type="input"} 30`);
    expect(scrape).toContain(`antler_model_calls_total{${labels},kind="chat"} 2`);
    expect(scrape).toContain(`antler_model_calls_total{tenant="globex",agent="research",model="mock",kind="chat"} 1`);
  });

  it("needs the admin token", async () => {
    expect((await fetch(`${url}/api/usage`)).status).toBe(401);
    expect((await fetch(`${url}/api/usage?tenant=acme`, { headers: { authorization: "Bearer nope" } })).status).toBe(401);
    const ok = await getUsage();
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ rows: [], totals: { calls: 0, input_tokens: 0, output_tokens: 0, total_tokens: 0 } });
  });
});
