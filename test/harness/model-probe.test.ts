/**
 * The model endpoint probe shared by `antler doctor` and the agent's status: what it says of an
 * endpoint that answers, refuses connections or rejects the key, and that its cache spares the
 * endpoint.
 */
import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { parseConfig } from "../../src/config/loader.js";
import type { ModelConfig } from "../../src/config/schema.js";
import { runDoctor } from "../../src/doctor.js";
import { ModelProber, probeModel } from "../../src/harness/models/probe.js";
import { freePort } from "../contract/gateway.js";
import { startMockModel } from "../fakes/openai.js";
import { memoryLogger } from "./helpers.js";

const KEY = "sk-probe-secret-key";
let server: Server | undefined;
afterEach(async () => {
  server?.close();
  server = undefined;
});

/** An OpenAI-like endpoint that answers every request with `status`, counting them. */
async function endpoint(status: number): Promise<{ url: string; hits: () => number }> {
  let hits = 0;
  server = createServer((_req, res) => {
    hits++;
    res.writeHead(status, { "content-type": "application/json" }).end('{"error":{"message":"Incorrect API key"}}');
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, hits: () => hits };
}

const model = (base_url?: string): ModelConfig =>
  ({
    name: "main",
    use: "@langchain/openai:ChatOpenAI",
    model: "gpt-x",
    api_key: KEY,
    base_url,
    supports_vision: false,
  }) as ModelConfig;

describe("probeModel", () => {
  it("ok, refused, key rejected, and no base_url", async () => {
    const mock = await startMockModel();
    try {
      expect(await probeModel(model(mock.url))).toMatchObject({ outcome: "ok", detail: `gpt-x at ${mock.url} is reachable` });
    } finally {
      await mock.close();
    }
    const port = await freePort();
    const refused = await probeModel(model(`http://127.0.0.1:${port}/v1`));
    expect(refused.outcome).toBe("unreachable");
    expect(refused.detail).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1\/models is not reachable \(connect ECONNREFUSED .*base_url/);
    const { url } = await endpoint(401);
    const rejected = await probeModel(model(url));
    expect(rejected).toMatchObject({ outcome: "rejected" });
    expect(rejected.detail).toBe(`${url}/models rejected the API key (HTTP 401); check its api_key`);
    expect(await probeModel(model(undefined))).toMatchObject({ outcome: "unprobed" });
    expect(JSON.stringify([refused, rejected])).not.toContain(KEY);
  });

  it("a prober asks once while its answer is fresh, and again once it is stale", async () => {
    const { url, hits } = await endpoint(401);
    const prober = new ModelProber(model(url), { cacheMs: 200 });
    const [a, b] = await Promise.all([prober.check(), prober.check()]);
    expect(a).toBe(b);
    await prober.check();
    expect(hits()).toBe(1);
    await new Promise((r) => setTimeout(r, 250));
    await prober.check();
    expect(hits()).toBe(2);
  });
});

describe("antler doctor's model line", () => {
  it("passes a reachable endpoint and fails a refused key, naming what to set", async () => {
    const mock = await startMockModel();
    const { url } = await endpoint(403);
    try {
      const config = parseConfig(
        stringify({
          storage: { path: "/tmp/antler-doctor-unused.db" },
          models: [
            { name: "good", model: "m", base_url: mock.url, api_key: KEY },
            { name: "bad", model: "m", base_url: url, api_key: KEY },
          ],
        }),
        {},
      );
      const lines = await runDoctor({ config, baseDir: ".", path: "test.yaml" }, memoryLogger().logger);
      expect(lines.find((l) => l.subject === "model good")).toEqual({
        ok: true,
        subject: "model good",
        detail: `m at ${mock.url} is reachable`,
      });
      const bad = lines.find((l) => l.subject === "model bad");
      expect(bad).toMatchObject({ ok: false });
      expect(bad?.detail).toMatch(/rejected the API key \(HTTP 403\); check its api_key/);
    } finally {
      await mock.close();
    }
  });
});
