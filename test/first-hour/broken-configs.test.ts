/**
 * Every broken config in broken-configs.ts through the real CLI: `antler start` exits 2 with
 * one line naming the key and the fix (and binds nothing), and `antler doctor` reports the same
 * problem and exits non-zero.
 */
import { createServer, type Server } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../../src/testing/gateway.js";
import { runCli, tempConfig } from "../helpers/cli.js";
import { BROKEN_CONFIGS, type Ports } from "./broken-configs.js";

let holder: Server | undefined;
let ports: Ports;

beforeAll(async () => {
  const taken = await freePort();
  holder = createServer().listen(taken, "127.0.0.1");
  await new Promise((resolve) => holder?.once("listening", resolve));
  // Port 0: the kernel picks one when the preflight tries it, so no other test running at the
  // same time can take it between this line and the check (only the "taken" config is in use).
  ports = { server: 0, closed: await freePort(), taken };
});
afterAll(() => {
  holder?.close();
});

/** The lines a run printed, without log lines (JSON) and blank lines. */
const printed = (output: string) =>
  output
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "" && !l.startsWith("{"));

describe.concurrent("a broken config", () => {
  it("there are at least 25 of them", () => {
    expect(BROKEN_CONFIGS.length).toBeGreaterThanOrEqual(25);
  });

  for (const broken of BROKEN_CONFIGS) {
    it(broken.name, { timeout: 120_000 }, async () => {
      const file = tempConfig(broken.text(ports));
      const env = { ...broken.env, LOG_LEVEL: undefined };
      const start = await runCli(["start", "--config", file], env);
      const lines = printed(start.output);
      expect(start.code, start.output).toBe(2);
      expect(lines, start.output).toHaveLength(1);
      expect(lines[0]).toMatch(/^config error: /);
      expect(lines[0]?.replace(/^config error: /, "")).toMatch(broken.line);
      expect(start.output).not.toMatch(/\n\s+at /); // no stack trace

      const doctor = await runCli(["doctor", "--config", file], env);
      expect(doctor.code, doctor.output).not.toBe(0);
      const reported = printed(doctor.output).filter((l) => l.startsWith("FAIL") || l.startsWith("config error:"));
      expect(
        reported.some((l) => l.includes(broken.key)),
        doctor.output,
      ).toBe(true);
    });
  }
});
