import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { loadConfig } from "../../src/config/loader.js";
import { createHarness } from "../../src/harness/index.js";
import { type MockModel, mockModelConfig, startMockModel } from "../fakes/openai.js";
import { ROOT } from "../helpers/cli.js";
import { collect, last, memoryLogger, tempDir } from "./helpers.js";

let mock: MockModel | undefined;
afterEach(async () => {
  await mock?.close();
});

function spawnFixture(name: string, args: string[]) {
  return spawn(process.execPath, ["--import", "tsx", path.join(ROOT, "test/harness/fixtures", name), ...args], {
    cwd: ROOT,
    env: { ...process.env, NODE_OPTIONS: "" },
    stdio: ["ignore", "pipe", "pipe"],
  });
}

function runChild(args: string[]): Promise<{ code: number | null; lines: Array<Record<string, unknown>>; stderr: string }> {
  const child = spawn(process.execPath, ["--import", "tsx", path.join(ROOT, "test/harness/fixtures/resume-child.ts"), ...args], {
    cwd: ROOT,
    env: { ...process.env, NODE_OPTIONS: "" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout.on("data", (d: Buffer) => {
    out += d.toString();
  });
  child.stderr.on("data", (d: Buffer) => {
    err += d.toString();
  });
  return new Promise((resolve) =>
    child.on("exit", (code) =>
      resolve({
        code,
        stderr: err,
        lines: out
          .split("\n")
          .filter(Boolean)
          .map((l) => JSON.parse(l) as Record<string, unknown>),
      }),
    ),
  );
}

describe("restart", () => {
  it("a second process resumes a pending question from the SQLite file the first wrote", async () => {
    mock = await startMockModel();
    const dir = tempDir();
    const file = path.join(dir, "config.yaml");
    writeFileSync(file, stringify({ storage: { path: "./data/antler.db" }, models: [mockModelConfig(mock)] }));
    const loaded = loadConfig({ file, env: {} });
    const { logger } = memoryLogger();

    const first = await createHarness({ config: loaded.config, baseDir: loaded.baseDir, logger });
    mock.enqueue({
      toolCalls: [
        { name: "ask_clarification", id: "call_q", args: { question: "Deploy to which region?", options: ["eu", "us"] } },
      ],
    });
    const paused = await collect(first.run("deploy-thread", "deploy it"));
    expect(last(paused)).toMatchObject({ type: "clarification", question: "Deploy to which region?" });
    await first.close();

    mock.enqueue({ text: "Deploying to eu." });
    const child = await runChild([file, "deploy-thread", "eu"]);
    expect(child.stderr).toBe("");
    expect(child.code).toBe(0);
    expect(child.lines[0]).toMatchObject({
      type: "thread",
      info: { pending: { question: "Deploy to which region?", options: ["eu", "us"] }, messageCount: 2 },
    });
    expect(child.lines.at(-1)).toEqual({ type: "done", text: "Deploying to eu.", usage: expect.any(Object) });
    expect(mock.requests.at(-1)?.messages.at(-1)).toMatchObject({ role: "tool", tool_call_id: "call_q", content: "eu" });

    // And the first side sees the finished thread after reopening the file.
    const again = await createHarness({ config: loaded.config, baseDir: loaded.baseDir, logger });
    const info = await again.getThread("deploy-thread");
    expect(info?.pending).toBeUndefined();
    expect(info?.messageCount).toBe(4);
    await again.close();
  });

  it("a thread whose process died in the middle of a tool call works in the next process, without the dangling-call feature", async () => {
    mock = await startMockModel();
    const dir = tempDir();
    const file = path.join(dir, "config.yaml");
    // The harness must repair the thread itself; the request-time patch is switched off.
    const agent = { features: { dangling_tool_calls: false } };
    writeFileSync(file, stringify({ storage: { path: "./data/antler.db" }, models: [mockModelConfig(mock)], agent }));
    mock.enqueue({ text: "Starting.", toolCalls: [{ name: "wait_forever", args: {}, id: "call_crash" }] });

    const child = spawnFixture("crash-child.ts", [file, "crash-thread", "do the long thing"]);
    const exited = new Promise((resolve) => child.on("exit", resolve));
    let out = "";
    await new Promise<void>((resolve, reject) => {
      child.stdout.on("data", (d: Buffer) => {
        out += d.toString();
        if (out.includes('"tool_running"')) resolve();
      });
      child.on("exit", () => reject(new Error(`the child exited before its tool ran: ${out}`)));
    });
    child.kill("SIGKILL");
    await exited;

    const loaded = loadConfig({ file, env: {} });
    const { logger } = memoryLogger();
    const next = await createHarness({ config: loaded.config, baseDir: loaded.baseDir, logger });
    const events = await collect(next.run("crash-thread", "are you there?"));
    expect(last(events)).toMatchObject({ type: "done", text: "ok: are you there?" });
    const sent = mock.requests
      .at(-1)
      ?.messages.slice(1)
      .map((m) => `${m.role}:${m.tool_call_id ?? m.content}`);
    expect(sent).toEqual(["user:do the long thing", "assistant:Starting.", "tool:call_crash", "user:are you there?"]);
    expect(await next.getThread("crash-thread")).toMatchObject({ running: false, messageCount: 5 });
    expect((await next.getThread("crash-thread"))?.pending).toBeUndefined();
    await next.close();
  });
});
