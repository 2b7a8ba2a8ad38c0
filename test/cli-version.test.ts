/** `antler --version`, and what the start log says about the config, agent and model in use. */
import { describe, expect, it } from "vitest";
import { VERSION } from "../src/version.js";
import { runCli, spawnCli, tempConfig } from "./helpers/cli.js";

describe("antler --version", () => {
  for (const flag of ["--version", "-v"]) {
    it(`prints the version for ${flag}`, async () => {
      const { code, output } = await runCli([flag]);
      expect(code).toBe(0);
      expect(output.trim()).toBe(VERSION);
      expect(VERSION).toMatch(/^\d+\.\d+\.\d+/);
    });
  }
});

describe("the start log", () => {
  it("names the config file, the agent, its model and the model's base URL in one line", async () => {
    const file = tempConfig(
      "server:\n  port: 0\nstorage:\n  path: ./antler.db\nlogging:\n  format: json\nmodels:\n  - name: m\n    model: some-model\n    base_url: http://user:pw@127.0.0.1:9/v1\n",
    );
    const p = spawnCli(["start", "--config", file]);
    try {
      const started = Date.now();
      while (!p.output().includes('"antler starting"') && Date.now() - started < 15_000) {
        await new Promise((r) => setTimeout(r, 50));
      }
      const line = p
        .output()
        .split("\n")
        .find((l) => l.includes('"antler starting"'));
      expect(line, p.output()).toBeDefined();
      expect(JSON.parse(line!)).toMatchObject({
        config: file,
        agent: "default",
        backend: "embedded",
        model: "m",
        model_id: "some-model",
        base_url: "http://127.0.0.1:9/v1",
      });
    } finally {
      p.child.kill("SIGTERM");
      await p.exited;
    }
  });
});
