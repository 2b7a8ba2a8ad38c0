/**
 * MCP over the network: server-everything in its Streamable HTTP and SSE modes, started by the
 * test on 127.0.0.1 (a free port), stopped and started again to check the lazy reconnect.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { freePort } from "../contract/gateway.js";
import { type MockModel, startMockModel } from "../fakes/openai.js";
import { collect, last, startHarness, type TestHarness } from "./helpers.js";
import { everythingServer, toolMessages } from "./mcp-helpers.js";

let mock: MockModel;
let t: TestHarness | undefined;
const started: ChildProcess[] = [];

beforeEach(async () => {
  mock = await startMockModel();
});

afterEach(async () => {
  await t?.harness.close();
  t = undefined;
  for (const child of started.splice(0)) await stop(child);
  await mock.close();
});

/** Starts server-everything in `mode` on `port` and waits until it listens. */
async function startNetworkServer(mode: "streamableHttp" | "sse", port: number): Promise<ChildProcess> {
  const { command, args } = everythingServer() as { command: string; args: string[] };
  const child = spawn(command, [args[0] as string, mode], {
    env: { PATH: process.env.PATH, PORT: String(port) },
    stdio: ["ignore", "ignore", "pipe"],
  });
  started.push(child);
  let err = "";
  await new Promise<void>((resolve, reject) => {
    child.stderr?.on("data", (d: Buffer) => {
      err += d.toString();
      if (/listening|running/i.test(err)) resolve();
    });
    child.once("exit", (code) => reject(new Error(`server exited with ${code}: ${err}`)));
  });
  return child;
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill("SIGKILL");
  await once(child, "exit");
}

describe("MCP tools over the network", () => {
  it("calls a tool over Streamable HTTP; a server that went away is reconnected on the next run", async () => {
    const port = await freePort();
    const first = await startNetworkServer("streamableHttp", port);
    const url = `http://127.0.0.1:${port}/mcp`;
    t = await startHarness(mock, { mcp_servers: { remote: { transport: "http", url, timeout_ms: 10_000 } } });
    const server = t.harness.mcp?.server("remote");
    expect(server?.report()).toMatchObject({ transport: "http", state: "ready" });

    mock.enqueue({ toolCalls: [{ name: "echo", args: { message: "over http" } }] }, { text: "one" });
    expect(last(await collect(t.harness.run("t1", "first")))).toMatchObject({ type: "done", text: "one" });
    expect(toolMessages(mock.requests[1]?.messages)[0]?.text).toBe("Echo: over http");

    await stop(first);
    mock.enqueue({ toolCalls: [{ name: "echo", args: { message: "nobody home" } }] }, { text: "two" });
    expect(last(await collect(t.harness.run("t1", "second")))).toMatchObject({ type: "done", text: "two" });
    const failed = toolMessages(mock.requests[3]?.messages).at(-1)?.text ?? "";
    expect(failed).toMatch(/^Error: tool echo failed: /);
    expect(failed).toContain('MCP server "remote" stopped during the call: the server stopped answering');
    expect(failed).not.toContain("Echo: nobody home");
    expect(server?.report().state).toBe("failed");

    await startNetworkServer("streamableHttp", port);
    mock.enqueue({ toolCalls: [{ name: "echo", args: { message: "back" } }] }, { text: "three" });
    expect(last(await collect(t.harness.run("t1", "third")))).toMatchObject({ type: "done", text: "three" });
    expect(toolMessages(mock.requests[5]?.messages).at(-1)?.text).toBe("Echo: back");
    expect(server?.report().state).toBe("ready");
  });

  it("calls a tool over SSE", async () => {
    const port = await freePort();
    await startNetworkServer("sse", port);
    const url = `http://127.0.0.1:${port}/sse`;
    t = await startHarness(mock, { mcp_servers: { legacy: { transport: "sse", url } } });
    mock.enqueue({ toolCalls: [{ name: "get-sum", args: { a: 40, b: 2 } }] }, { text: "done" });

    await collect(t.harness.run("t1", "sum"));

    expect(t.harness.mcp?.server("legacy")?.report()).toMatchObject({ transport: "sse", state: "ready" });
    expect(toolMessages(mock.requests[1]?.messages)[0]?.text).toContain("42");
  });

  it("an HTTP server that is not there fails fast with the reason", async () => {
    const port = await freePort();
    t = await startHarness(mock, { mcp_servers: { gone: { transport: "http", url: `http://127.0.0.1:${port}/mcp` } } });
    const report = t.harness.mcp?.server("gone")?.report();
    expect(report?.state).toBe("failed");
    expect(report?.error?.message).toBe(`cannot reach http://127.0.0.1:${port} (connection failed)`);
  });
});
