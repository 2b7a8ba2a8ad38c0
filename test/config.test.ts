import path from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig, parseConfig } from "../src/config/loader.js";
import { ROOT, runCli, tempConfig } from "./helpers/cli.js";
import { configIssues } from "./helpers/config.js";

describe("config", () => {
  it("fills defaults for an empty file", () => {
    const config = parseConfig("", {});
    expect(config.server).toEqual({
      host: "127.0.0.1",
      port: 8787,
      headers_timeout_ms: 10_000,
      request_timeout_ms: 30_000,
      keep_alive_timeout_ms: 5_000,
      max_connections: 1_000,
      max_body_bytes: 1_048_576,
    });
    expect(config.storage.path).toBe("./data/antler.db");
    expect(config.channels).toEqual({});
  });

  it("interpolates ${VAR} and ${VAR:-default}, inline too", () => {
    const config = parseConfig(
      "server:\n  port: ${PORT}\n  host: ${HOST:-0.0.0.0}\nmodels:\n  - name: m\n    model: x\n    base_url: http://${H}:1/v1\n",
      { PORT: "9000", H: "example.test" },
    );
    expect(config.server.port).toBe(9000);
    expect(config.server.host).toBe("0.0.0.0");
    expect(config.models[0]?.base_url).toBe("http://example.test:1/v1");
    expect(config.models[0]?.use).toBe("@langchain/openai:ChatOpenAI");
  });

  it("names the variable and the key path of an unset variable", () => {
    expect(configIssues("channels:\n  slack:\n    bot_token: ${SLACK_BOT_TOKEN}\n")).toEqual([
      "channels.slack.bot_token: environment variable SLACK_BOT_TOKEN is not set: export SLACK_BOT_TOKEN=… or write ${SLACK_BOT_TOKEN:-default} in the config",
    ]);
  });

  it("rejects unknown keys with their full path", () => {
    expect(configIssues("server:\n  prot: 1\n")).toEqual(["server.prot: unknown key: did you mean `port`? rename it"]);
  });

  it("reports every problem, each with its path", () => {
    const found = configIssues("server:\n  port: high\nmodels:\n  - name: a\nbogus: 1\n");
    expect(found).toHaveLength(3);
    expect(found).toContain('server.port: must be a number, not string "high": change the value');
    expect(found).toContain("models[0].model: is required: add it (type string)");
    expect(found.some((l) => l.startsWith("bogus: unknown key"))).toBe(true);
  });

  it("reports YAML syntax errors with file, line and column", () => {
    const [line] = configIssues("server:\n  port: [1\n");
    expect(line).toMatch(/config:\d+:\d+: YAML syntax error/);
  });

  it("collects secret values for the logger", () => {
    const file = tempConfig("server:\n  admin_token: adm-123456\nchannels:\n  telegram:\n    bot_token: 123:abcdef\n");
    const loaded = loadConfig({ file, env: {} });
    expect(loaded.secrets.sort()).toEqual(["123:abcdef", "adm-123456"]);
    const withDb = loadConfig({
      file: tempConfig("storage:\n  kind: postgres\n  url: postgres://antler:s%40cret-pw@db:5432/antler\n"),
      env: {},
    });
    // The password of a URL is hidden in logs like any token; the URL's other parts are not secrets.
    expect(withDb.secrets.sort()).toEqual(["s%40cret-pw", "s@cret-pw"]);
    expect(loaded.baseDir).toBe(path.dirname(file));
  });

  it("validates config.example.yaml as shipped", () => {
    const loaded = loadConfig({ file: path.join(ROOT, "config.example.yaml"), env: {} });
    expect(loaded.config.models.length).toBeGreaterThan(0);
  });
});

describe("antler start with a bad config", () => {
  const cases: Record<string, { text: string; expect: RegExp }> = {
    "a YAML syntax error": { text: "server:\n  port: [1\n", expect: /^config error: .*YAML syntax error/ },
    "an unknown key": { text: "server:\n  hots: x\n", expect: /^config error: server\.hots: unknown key/ },
    "a wrong type": { text: "server:\n  port: nope\n", expect: /^config error: server\.port: must be a number/ },
    "an unset variable": {
      text: "server:\n  admin_token: ${ANTLER_TEST_UNSET_VAR}\n",
      expect: /^config error: server\.admin_token: environment variable ANTLER_TEST_UNSET_VAR is not set/,
    },
  };
  for (const [name, c] of Object.entries(cases)) {
    it(`exits 2 on ${name}, one line per problem, no stack trace`, async () => {
      const { code, output } = await runCli(["start", "--config", tempConfig(c.text)], { ANTLER_TEST_UNSET_VAR: undefined });
      expect(code).toBe(2);
      const lines = output.trim().split("\n");
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(c.expect);
      expect(output).not.toMatch(/\n\s+at /);
    });
  }
});
