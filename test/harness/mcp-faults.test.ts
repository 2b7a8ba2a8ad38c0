/**
 * MCP servers that fail: a command that does not exist, one that hangs in the handshake, a tool
 * call that runs too long. The harness and the gateway keep working; the errors show in
 * `/api/mcp` and `antler doctor`; no server process outlives shutdown.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/loader.js";
import { AppConfigSchema } from "../../src/config/schema.js";
import { runDoctor } from "../../src/doctor.js";
import { createGateway, type Gateway } from "../../src/gateway.js";
import type { McpServerReport } from "../../src/harness/index.js";
import { eventually, freePort, testLogger } from "../contract/gateway.js";
import { LoopbackWorld } from "../fakes/loopback.js";
import { type MockModel, mockModelConfig, startMockModel } from "../fakes/openai.js";
import { collect, last, startHarness, type TestHarness } from "./helpers.js";
import { everythingServer, hangingServer, processExists, readPid, toolMessages, waitFor } from "./mcp-helpers.js";

let mock: MockModel;
let t: TestHarness | undefined;
let gateway: Gateway | undefined;
let dir: string;

beforeEach(async () => {
  mock = await startMockModel();
  dir = mkdtempSync(path.join(tmpdir(), "antler-mcp-"));
});

afterEach(async () => {
  await t?.harness.close();
  await gateway?.stop();
  t = undefined;
  gateway = undefined;
  await mock.close();
});

const MISSING = "/nonexistent/antler-no-such-mcp-server";

function brokenServers(pidFile: string) {
  return {
    missing: { command: MISSING },
    hang: hangingServer(pidFile, 500),
    off: { enabled: false, command: MISSING },
    everything: everythingServer(),
  };
}

describe("MCP servers that fail to start", () => {
  it("a missing command and a hanging one cost only their tools; the error is kept and the hung process is stopped", async () => {
    const pidFile = path.join(dir, "hang.pid");
    const started = Date.now();
    t = await startHarness(mock, { mcp_servers: brokenServers(pidFile) });
    expect(Date.now() - started).toBeLessThan(8000);

    const reports = Object.fromEntries((t.harness.mcp?.reports() ?? []).map((r) => [r.name, r]));
    expect(reports.missing).toMatchObject({ state: "failed", tools: [], enabled: true });
    expect(reports.missing?.error?.message).toContain(`command not found: ${MISSING}`);
    expect(reports.hang).toMatchObject({ state: "failed", tools: [] });
    expect(reports.hang?.error?.message).toMatch(/^did not answer within 500 ms/);
    expect(Date.parse(reports.hang?.error?.at ?? "")).toBeGreaterThanOrEqual(started);
    expect(reports.off).toMatchObject({ state: "disabled", enabled: false, tools: [], error: null });
    expect(reports.everything?.state).toBe("ready");
    const hungPid = readPid(pidFile);
    await waitFor(() => !processExists(hungPid));

    mock.enqueue({ toolCalls: [{ name: "echo", args: { message: "still here" } }] }, { text: "done" });
    const events = await collect(t.harness.run("t1", "hi"));
    expect(last(events)).toMatchObject({ type: "done", text: "done" });
    expect(toolMessages(mock.requests[1]?.messages)[0]?.text).toBe("Echo: still here");
  });

  it("a server whose process exits at once reports its stderr", async () => {
    const crash = { command: process.execPath, args: ["-e", "console.error('boom: missing API key'); process.exit(3)"] };
    t = await startHarness(mock, { mcp_servers: { crash } });
    const report = t.harness.mcp?.server("crash")?.report();
    expect(report?.state).toBe("failed");
    expect(report?.error?.message).toContain("boom: missing API key");
  });

  it("a tool call that outlasts tool_timeout_ms fails as a tool error; the server stays up", async () => {
    t = await startHarness(mock, { mcp_servers: { everything: everythingServer({ tool_timeout_ms: 300 }) } });
    const server = t.harness.mcp?.server("everything");
    const pid = server?.pid;
    mock.enqueue(
      { toolCalls: [{ name: "trigger-long-running-operation", args: { duration: 3, steps: 3 } }] },
      { toolCalls: [{ name: "echo", args: { message: "quick" } }] },
      { text: "done" },
    );

    const events = await collect(t.harness.run("t1", "slow then quick"));

    expect(last(events)).toMatchObject({ type: "done", text: "done" });
    const [slow, quick] = toolMessages(mock.requests.at(-1)?.messages);
    expect(slow?.text).toMatch(/timed out/i);
    expect(quick?.text).toBe("Echo: quick");
    expect(server?.pid).toBe(pid);
    expect(server?.report().state).toBe("ready");
  });
});

describe("MCP status for operators", () => {
  it("the gateway serves conversations and shows every server in /api/mcp; stop leaves no process", async () => {
    const pidFile = path.join(dir, "hang.pid");
    const world = new LoopbackWorld();
    const port = await freePort();
    const config = AppConfigSchema.parse({
      server: { host: "127.0.0.1", port, admin_token: "mcp-admin-token" },
      storage: { path: path.join(dir, "antler.db") },
      models: [mockModelConfig(mock)],
      mcp_servers: brokenServers(pidFile),
      channels: { loop: world.channelConfig() },
    });
    gateway = createGateway({ loaded: { config, baseDir: dir }, logger: testLogger() });
    await gateway.start();
    const url = `http://127.0.0.1:${port}/api/mcp`;

    expect((await fetch(url)).status).toBe(401);
    const res = await fetch(url, { headers: { authorization: "Bearer mcp-admin-token" } });
    expect(res.status).toBe(200);
    const { servers } = (await res.json()) as { servers: McpServerReport[] };
    expect(servers.map((s) => [s.name, s.transport, s.state])).toEqual([
      ["missing", "stdio", "failed"],
      ["hang", "stdio", "failed"],
      ["off", "stdio", "disabled"],
      ["everything", "stdio", "ready"],
    ]);
    expect(servers[0]?.error?.message).toContain("command not found");
    expect(servers[3]?.tools).toContain("echo");

    mock.enqueue({ toolCalls: [{ name: "echo", args: { message: "via chat" } }] }, { text: "chat reply" });
    await world.userSays("use the tool");
    await eventually(() => world.botMessages().some((m) => m.text === "chat reply"));
    expect(toolMessages(mock.requests[1]?.messages)[0]?.text).toBe("Echo: via chat");

    const live = gateway.agentDirectory?.mcpOf("default")?.server("everything")?.pid as number;
    expect(processExists(live)).toBe(true);
    await gateway.stop();
    gateway = undefined;
    expect([readPid(pidFile), live].filter(processExists)).toEqual([]);
  });

  it("antler doctor lists each MCP server with its tools or its error", async () => {
    const pidFile = path.join(dir, "hang.pid");
    const config = AppConfigSchema.parse({ models: [], mcp_servers: brokenServers(pidFile) });
    const lines = await runDoctor({ config, baseDir: dir, path: path.join(dir, "config.yaml") }, testLogger());

    const mcp = Object.fromEntries(lines.filter((l) => l.subject.startsWith("mcp ")).map((l) => [l.subject, l]));
    expect(Object.keys(mcp)).toEqual(["mcp missing", "mcp hang", "mcp off", "mcp everything"]);
    expect(mcp["mcp missing"]).toMatchObject({ ok: false, detail: expect.stringContaining("command not found") });
    expect(mcp["mcp hang"]).toMatchObject({ ok: false, detail: expect.stringContaining("did not answer within 500 ms") });
    expect(mcp["mcp off"]).toEqual({ ok: true, subject: "mcp off", detail: "disabled" });
    expect(mcp["mcp everything"]?.ok).toBe(true);
    expect(mcp["mcp everything"]?.detail).toMatch(/^stdio, 13 tools: echo, .*get-sum/);
    await waitFor(() => !processExists(readPid(pidFile)));
  });
});

describe("mcp_servers config", () => {
  it("interpolates ${VAR} in every field", () => {
    const text = [
      "mcp_servers:",
      "  s:",
      "    command: ${MCP_CMD}",
      '    args: ["${MCP_ARG}"]',
      "    env: { TOKEN: '${MCP_TOKEN}' }",
      "    timeout_ms: ${MCP_TIMEOUT:-1234}",
      "    tool_prefix: ${MCP_PREFIX}",
    ].join("\n");
    const env = { MCP_CMD: "node", MCP_ARG: "server.js", MCP_TOKEN: "tok-1", MCP_PREFIX: "px" };
    const server = parseConfig(text, env).mcp_servers.s;
    expect(server).toMatchObject({ command: "node", args: ["server.js"], env: { TOKEN: "tok-1" }, timeout_ms: 1234 });
    expect(server?.tool_prefix).toBe("px");
  });

  it("names the missing key: command for stdio, url for http", () => {
    expect(() => parseConfig("mcp_servers:\n  s: { transport: stdio }\n", {})).toThrow(/mcp_servers\.s\.command: is required/);
    expect(() => parseConfig("mcp_servers:\n  s: { transport: http }\n", {})).toThrow(/mcp_servers\.s\.url: is required/);
    expect(() => parseConfig("mcp_servers:\n  s: { enabled: false }\n", {})).not.toThrow();
  });
});
