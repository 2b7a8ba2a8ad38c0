/**
 * `antler chat` as a person at a terminal sees it: run under a pseudo-terminal (a small python3
 * relay, test/helpers/pty-relay.py), against the mock model. The banner shows, Markdown comes
 * out as plain text, and every reply ends with a newline before the next prompt.
 */
import { spawn, spawnSync } from "node:child_process";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PROMPT } from "../../src/channels/console/index.js";
import { type MockModel, mockModelConfig, startMockModel } from "../fakes/openai.js";
import { CLI, ROOT, tempConfig } from "../helpers/cli.js";

const RELAY = path.join(ROOT, "test/helpers/pty-relay.py");
const hasPython = spawnSync("python3", ["-c", "import pty"]).status === 0;

/** The terminal's output so far, with the pty's CR LF line ends as plain LF. */
function screen(raw: string): string {
  return raw.replace(/\r\n/g, "\n");
}

describe.skipIf(!hasPython)("antler chat in a terminal (needs python3 for the pseudo-terminal)", () => {
  let mock: MockModel;
  beforeAll(async () => {
    mock = await startMockModel();
  });
  afterAll(async () => {
    await mock.close();
  });

  it("shows a banner, plain text for Markdown, and a newline after each reply before the prompt", async () => {
    const model = mockModelConfig(mock);
    const file = tempConfig(
      [
        "storage:",
        "  path: ./antler.db",
        "models:",
        ...Object.entries(model).map(([k, v], i) => `${i === 0 ? "  - " : "    "}${k}: ${JSON.stringify(v)}`),
        "",
      ].join("\n"),
    );
    mock.enqueue({ text: "Here is **bold** text.\n\n- one\n- two", chunkSize: 4 }, { text: "second answer", chunkSize: 3 });
    const child = spawn("python3", [RELAY, process.execPath, "--import", "tsx", CLI, "chat", "--config", file], {
      cwd: ROOT,
      env: { ...process.env, NODE_OPTIONS: "" },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let raw = "";
    child.stdout.on("data", (d: Buffer) => {
      raw += d.toString("utf8");
    });
    child.stderr.on("data", (d: Buffer) => {
      raw += d.toString("utf8");
    });
    const exited = new Promise<number | null>((resolve) => child.on("exit", resolve));
    const prompts = () => screen(raw).split(PROMPT).length - 1;
    const waitFor = async (count: number) => {
      const started = Date.now();
      while (prompts() < count && Date.now() - started < 40_000) await new Promise((r) => setTimeout(r, 50));
      expect(prompts(), screen(raw)).toBeGreaterThanOrEqual(count);
    };
    try {
      await waitFor(1);
      child.stdin.write("first\r");
      await waitFor(2);
      child.stdin.write("second\r");
      await waitFor(3);
      child.stdin.write("\x04");
      expect(await exited).toBe(0);
    } finally {
      child.kill();
    }
    const shown = screen(raw);
    expect(shown).toMatch(/^Antler \d+\.\d+\.\d+ — terminal chat \(config .*config\.yaml\)\n/);
    expect(shown).toContain("Agent: default, on model mock (mock-model) at http://127.0.0.1:");
    expect(shown).toContain("Ctrl-D or Ctrl-C quits.");
    // The typed line is echoed by the terminal; each reply then ends its own line before the prompt.
    expect(shown).toContain(`${PROMPT}first\nantler› Here is bold text.\n\n• one\n• two\n${PROMPT}`);
    expect(shown).toContain(`${PROMPT}second\nantler› second answer\n${PROMPT}`);
    expect(shown).not.toContain("**");
  }, 120_000);
});
