/**
 * A gateway killed with SIGKILL in the middle of a reply, then started again: the user must get
 * a notice about the interrupted message, not silence. Runs the real CLI (`antler chat`) in a
 * child process, talking through the console channel.
 */
import { spawn } from "node:child_process";
import { afterEach, describe, expect, it } from "vitest";
import { NOTICES } from "../../src/core/dispatcher.js";
import { eventually } from "../contract/gateway.js";
import { type MockModel, mockModelConfig, startMockModel } from "../fakes/openai.js";
import { CLI, ROOT, tempConfig } from "../helpers/cli.js";

function chatProcess(config: string) {
  const child = spawn(process.execPath, ["--import", "tsx", CLI, "chat", "--config", config], {
    cwd: ROOT,
    stdio: ["pipe", "pipe", "pipe"],
    env: { ...process.env, NODE_OPTIONS: "" },
  });
  let out = "";
  child.stdout.on("data", (d: Buffer) => {
    out += d.toString();
  });
  child.stderr.on("data", (d: Buffer) => {
    out += d.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return { child, output: () => out, exited };
}

let model: MockModel | undefined;
afterEach(async () => {
  await model?.close();
});

describe("crash recovery", () => {
  it("tells the user after a SIGKILL mid-reply and a restart", async () => {
    model = await startMockModel();
    const story = "Once upon a time there was a gateway that never lost a message. ".repeat(20);
    model.enqueue({ text: story, chunkSize: 3, delayMs: 30 });
    const m = mockModelConfig(model);
    const config = tempConfig(
      `storage:\n  path: ./antler.db\nlogging:\n  level: error\nmodels:\n  - name: ${m.name}\n    model: ${m.model}\n    base_url: ${m.base_url}\n    api_key: test\n    max_retries: 0\n`,
    );

    const first = chatProcess(config);
    first.child.stdin.write("tell me a long story\n");
    await eventually(() => first.output().includes("Once upon a time"), 20_000, "the reply to start streaming");
    first.child.kill("SIGKILL");
    await first.exited;
    expect(first.output()).not.toContain(story.trim());

    const second = chatProcess(config);
    await eventually(() => second.output().includes(NOTICES.restarted), 20_000, "the restart notice");
    second.child.stdin.end();
    expect(await second.exited).toBe(0);
  });
});
