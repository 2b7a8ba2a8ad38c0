/**
 * The README's first command with the shipped config.example.yaml, before anyone configured a
 * model: `antler start` prints where the web chat is, the page answers, a message gets the notice
 * that says what to set, `/readyz` and the status page name the model problem and link the chat.
 */
import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { eventually, freePort } from "../src/testing/gateway.js";
import { newConversationId, WebBrowser } from "./fakes/web/client.js";
import { type CliProcess, ROOT, spawnCli, tempConfig } from "./helpers/cli.js";

let running: CliProcess | undefined;
afterEach(async () => {
  running?.child.kill("SIGKILL");
  await running?.exited;
  running = undefined;
});

describe("first run with config.example.yaml", () => {
  it("opens a web chat that says what to set while no model answers", { timeout: 90_000 }, async () => {
    const port = await freePort();
    const closed = await freePort(); // nothing listens there: the model endpoint is unreachable
    const example = readFileSync(path.join(ROOT, "config.example.yaml"), "utf8");
    expect(example).toMatch(/^ {2}port: 8787 /m);
    const file = tempConfig(example.replace(/^ {2}port: 8787 /m, `  port: ${port} `));
    running = spawnCli(["start", "--config", file], {
      OPENAI_BASE_URL: `http://127.0.0.1:${closed}/v1`,
      OPENAI_API_KEY: undefined,
      ANTLER_ADMIN_TOKEN: undefined,
      ANTLER_WEB_TOKEN: undefined,
    });
    const chatUrl = `http://127.0.0.1:${port}/chat`;
    await eventually(
      () => running?.output().includes(`web chat: open ${chatUrl}`),
      60_000,
      "the start-up line naming the chat's URL",
    );

    const page = await fetch(chatUrl);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<script type="module" src="/chat/app.js">');

    const browser = new WebBrowser(chatUrl);
    const tab = await browser.tab(newConversationId("first")).open();
    expect((await tab.say("hello?")).status).toBe(202);
    const notice = await eventually(() => tab.messages.find((m) => m.text.includes("OPENAI_BASE_URL")), 30_000, "the notice");
    expect(notice.text).toMatch(/can't be reached/);
    expect(notice.text).not.toContain(String(closed)); // no URL in the chat

    const ready = await fetch(`http://127.0.0.1:${port}/readyz`);
    expect(ready.status).toBe(503);
    const body = (await ready.json()) as { problems: string[]; agent: { reachable: boolean } };
    expect(body.agent.reachable).toBe(false);
    expect(body.problems.join(" ")).toMatch(/model/);

    const status = await (await fetch(`http://127.0.0.1:${port}/`)).text();
    expect(status).toContain('href="/chat"');
    expect(status).toMatch(/model default: .* is not reachable/);
    await tab.close();

    running.child.kill("SIGTERM");
    expect(await running.exited).toBe(0);
    writeFileSync(file, ""); // the temp config is not reused
  });
});

describe("npm run demo -- --web", () => {
  it("serves the web chat with the bundled mock model, streaming and asking a question", { timeout: 90_000 }, async () => {
    const port = await freePort();
    const child = spawn(
      process.execPath,
      ["--import", "tsx", path.join(ROOT, "test/demo/demo.ts"), "--web", "--port", String(port)],
      {
        cwd: ROOT,
        env: { ...process.env, NODE_OPTIONS: "" },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let out = "";
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
    });
    child.stderr.on("data", (d: Buffer) => {
      out += d.toString();
    });
    const exited = new Promise<number | null>((resolve) => child.on("exit", resolve));
    try {
      const chatUrl = `http://127.0.0.1:${port}/chat`;
      await eventually(() => out.includes(`open ${chatUrl}`), 60_000, "the demo's line naming the chat");
      const tab = await new WebBrowser(chatUrl).tab(newConversationId("demo")).open();
      await tab.say("hi");
      const reply = await eventually(
        () => tab.messages.find((m) => m.text.includes('You said: "hi"') && m.text.endsWith("options.")),
        30_000,
        "the demo's streamed reply",
      );
      expect(reply.versions.length).toBeGreaterThan(1);
      await tab.say("plan a trip");
      await eventually(
        () => tab.messages.find((m) => m.buttons.map((b) => b.label).join() === "Mountains,Seaside,City"),
        30_000,
        "the question",
      );
      await tab.click("Seaside");
      await eventually(() => tab.messages.find((m) => m.text.startsWith("Seaside it is.")), 30_000, "the answer's reply");
      await tab.close();
      child.kill("SIGTERM");
      expect(await exited).toBe(0);
    } finally {
      child.kill("SIGKILL");
    }
  });
});
