import { describe, expect, it } from "vitest";
import { loadConfig } from "../src/config/loader.js";
import { createLogger } from "../src/log/logger.js";
import { tempConfig } from "./helpers/cli.js";

function collector() {
  const lines: string[] = [];
  return { lines, stream: { write: (l: string) => void lines.push(l) } };
}

describe("logging", () => {
  const config = `server:
  admin_token: adm-SECRET-0001
models:
  - name: m
    model: gpt
    api_key: sk-SECRET-0002
channels:
  telegram:
    enabled: true
    bot_token: "123456:SECRET-0003"
  slack:
    signing_secret: SECRET-0004-signing
`;

  it("never writes a configured secret, whatever shape it is logged in", () => {
    const loaded = loadConfig({ file: tempConfig(config), env: {} });
    const out = collector();
    const log = createLogger({ level: "trace", secrets: loaded.secrets, destination: out.stream });
    log.info({ config: loaded.config }, "loaded config");
    log.info({ token: "123456:SECRET-0003", nested: { deeper: { api_key: "sk-SECRET-0002" } } }, "objects");
    log.error({ err: new Error("request to https://api/bot123456:SECRET-0003/getMe failed") }, "error text");
    log.warn(`interpolated into the message: ${"adm-SECRET-0001"} and "SECRET-0004-signing"`);
    const all = out.lines.join("");
    expect(out.lines).toHaveLength(4);
    expect(all).not.toContain("SECRET");
    expect(all).toContain("[redacted]");
    expect(all).toContain("loaded config");
  });

  it("writes JSON lines by default", () => {
    const out = collector();
    createLogger({ destination: out.stream }).info({ a: 1 }, "hello");
    expect(JSON.parse(out.lines[0] ?? "")).toMatchObject({ msg: "hello", a: 1, level: 30 });
  });
});

describe("adapter log lines", () => {
  // The registry hands each adapter a logger bound to `channel`; naming it again in a call
  // writes the key twice into one JSON object.
  it("never name the channel again in a call on the adapter's own logger", async () => {
    const { readdirSync, readFileSync } = await import("node:fs");
    const { join } = await import("node:path");
    const root = join(import.meta.dirname, "../src/channels");
    const offenders: string[] = [];
    for (const dir of readdirSync(root, { withFileTypes: true }).filter((d) => d.isDirectory())) {
      for (const file of readdirSync(join(root, dir.name), { recursive: true }) as string[]) {
        if (!file.endsWith(".ts")) continue;
        const text = readFileSync(join(root, dir.name, file), "utf8");
        for (const m of text.matchAll(/this\.logger(?:\.\w+|\[\w+\])\(\s*\{([^}]*)\}/g)) {
          if (/\bchannel\s*:/.test(m[1] ?? "")) offenders.push(`${dir.name}/${file}: ${m[0].replace(/\s+/g, " ")}`);
        }
      }
    }
    expect(offenders).toEqual([]);
  });
});
