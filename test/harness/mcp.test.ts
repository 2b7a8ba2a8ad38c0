import path from "node:path";
import { tool } from "langchain";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import type { RunEvent } from "../../src/harness/types.js";
import { type MockModel, startMockModel } from "../fakes/openai.js";
import { collect, last, startHarness, type TestHarness } from "./helpers.js";
import { everythingServer, processExists, toolMessages, waitFor } from "./mcp-helpers.js";

let mock: MockModel;
let t: TestHarness | undefined;

beforeEach(async () => {
  mock = await startMockModel();
});

afterEach(async () => {
  await t?.harness.close();
  t = undefined;
  await mock.close();
});

function toolNamesSent(index = 0): string[] {
  return (mock.requests[index]?.tools ?? []).map((d) => d.function.name);
}

describe("MCP tools over stdio (server-everything)", () => {
  it("a run calls a tool of the real server and its result reaches the model", async () => {
    t = await startHarness(mock, { mcp_servers: { everything: everythingServer() } });
    mock.enqueue({ toolCalls: [{ name: "echo", args: { message: "hello from antler" }, id: "call_1" }] }, { text: "done" });

    const events = await collect(t.harness.run("t1", "say hello"));

    expect(last(events)).toMatchObject({ type: "done", text: "done" });
    expect(toolNamesSent()).toEqual(expect.arrayContaining(["echo", "get-sum", "ask_clarification"]));
    expect(toolMessages(mock.requests[1]?.messages)).toEqual([{ name: "echo", text: "Echo: hello from antler" }]);
    const end = events.find((e) => e.type === "tool_end");
    expect(end).toMatchObject({ name: "echo", error: false, output: "Echo: hello from antler" });
    const report = t.harness.mcp?.reports()[0];
    expect(report).toMatchObject({ name: "everything", enabled: true, transport: "stdio", state: "ready", error: null });
    expect(report?.tools).toContain("echo");
  });

  it("passes the configured env to the server process", async () => {
    const server = everythingServer({ env: { ANTLER_MCP_PROBE: "probe-value-42" } });
    t = await startHarness(mock, { mcp_servers: { everything: server } });
    mock.enqueue({ toolCalls: [{ name: "get-env", args: {} }] }, { text: "done" });

    await collect(t.harness.run("t1", "env?"));

    expect(toolMessages(mock.requests[1]?.messages)[0]?.text).toContain('"ANTLER_MCP_PROBE": "probe-value-42"');
  });

  it("prefixes colliding tool names with the server name and applies tool_prefix", async () => {
    const echo = tool(async () => "local echo", { name: "echo", description: "a local echo", schema: z.object({}) });
    t = await startHarness(mock, { mcp_servers: { one: everythingServer(), two: everythingServer({ tool_prefix: "ev" }) } }, [
      echo,
    ]);
    mock.enqueue(
      {
        toolCalls: [
          { name: "one__echo", args: { message: "via one" } },
          { name: "ev__echo", args: { message: "via two" } },
        ],
      },
      { text: "done" },
    );

    await collect(t.harness.run("t1", "both"));

    const names = toolNamesSent();
    expect(names).toEqual(expect.arrayContaining(["echo", "one__echo", "ev__echo", "ev__get-sum", "get-sum"]));
    expect(names.filter((n) => n.endsWith("get-sum"))).toHaveLength(2);
    expect(toolMessages(mock.requests[1]?.messages).map((m) => m.text)).toEqual(["Echo: via one", "Echo: via two"]);
    expect(t.harness.mcp?.server("two")?.report().tools).toContain("ev__echo");
  });

  it("a configured tool whose own name differs from its config name still makes a colliding MCP tool prefixed", async () => {
    // The config calls it echo_tool; the tool calls itself echo, which is the name the model sees.
    const tools = [{ name: "echo_tool", use: `${path.join(import.meta.dirname, "fixtures/tools.mjs")}:echoTool` }];
    t = await startHarness(mock, { tools, mcp_servers: { everything: everythingServer() } });
    mock.enqueue({ toolCalls: [{ name: "everything__echo", args: { message: "remote" } }] }, { text: "done" });

    await collect(t.harness.run("t1", "echo"));

    expect(toolNamesSent()).toEqual(expect.arrayContaining(["echo", "everything__echo"]));
    expect(mock.requests[0]?.tools?.find((d) => d.function.name === "echo")?.function.description).toBe("Repeats the text.");
    expect(toolMessages(mock.requests[1]?.messages)).toEqual([{ name: "everything__echo", text: "Echo: remote" }]);
  });

  it("a server killed mid-call turns that call into a readable tool error, and the next run restarts it", async () => {
    t = await startHarness(mock, { mcp_servers: { everything: everythingServer() } });
    const server = t.harness.mcp?.server("everything");
    const firstPid = server?.pid;
    expect(firstPid).toBeTypeOf("number");
    mock.enqueue(
      { toolCalls: [{ name: "trigger-long-running-operation", args: { duration: 10, steps: 5 } }] },
      { text: "the tool broke" },
    );

    const events: RunEvent[] = [];
    for await (const e of t.harness.run("t1", "long job")) {
      events.push(e);
      // The operation runs 10 s; a second's wait puts the kill well inside the call even on a busy machine.
      if (e.type === "tool_start") setTimeout(() => process.kill(firstPid as number, "SIGKILL"), 1000);
    }

    expect(last(events)).toMatchObject({ type: "done", text: "the tool broke" });
    const [result] = toolMessages(mock.requests[1]?.messages);
    expect(result?.text).toMatch(/MCP server "everything" stopped during the call/);
    expect(result?.text).toContain("killed by SIGKILL");
    expect(result?.text).not.toMatch(/\n\s+at /);
    expect(server?.report()).toMatchObject({ state: "failed", error: { message: expect.stringContaining("SIGKILL") } });

    mock.enqueue({ toolCalls: [{ name: "echo", args: { message: "back again" } }] }, { text: "fine" });
    const next = await collect(t.harness.run("t1", "again"));

    expect(last(next)).toMatchObject({ type: "done", text: "fine" });
    expect(toolMessages(mock.requests[3]?.messages).at(-1)?.text).toBe("Echo: back again");
    expect(server?.pid).toBeTypeOf("number");
    expect(server?.pid).not.toBe(firstPid);
    expect(server?.report().state).toBe("ready");
  });

  it("a server that died between runs is restarted on the next call", async () => {
    t = await startHarness(mock, { mcp_servers: { everything: everythingServer() } });
    const server = t.harness.mcp?.server("everything");
    const pid = server?.pid as number;
    process.kill(pid, "SIGTERM");
    await waitFor(() => server?.report().state === "failed");

    mock.enqueue({ toolCalls: [{ name: "get-sum", args: { a: 2, b: 3 } }] }, { text: "sum done" });
    const events = await collect(t.harness.run("t1", "add"));

    expect(last(events)).toMatchObject({ type: "done", text: "sum done" });
    expect(toolMessages(mock.requests[1]?.messages)[0]?.text).toContain("5");
    expect(server?.report().state).toBe("ready");
  });

  it("leaves no MCP server process behind after close()", async () => {
    t = await startHarness(mock, { mcp_servers: { a: everythingServer(), b: everythingServer() } });
    const pids = [t.harness.mcp?.server("a")?.pid, t.harness.mcp?.server("b")?.pid] as number[];
    expect(pids.every((p) => typeof p === "number" && processExists(p))).toBe(true);

    await t.harness.close();

    expect(pids.filter(processExists)).toEqual([]);
  });
});
