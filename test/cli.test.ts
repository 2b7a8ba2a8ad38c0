import { describe, expect, it } from "vitest";
import { spawnCli, tempConfig } from "./helpers/cli.js";

async function freePort(): Promise<number> {
  const { createServer } = await import("node:net");
  return new Promise((resolve) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

describe("antler start", () => {
  it("serves /healthz and exits 0 on SIGTERM", async () => {
    const port = await freePort();
    const file = tempConfig(
      `server:\n  port: ${port}\nstorage:\n  path: ./antler.db\nlogging:\n  format: json\nmodels:\n  - name: m\n    model: any\n    base_url: http://127.0.0.1:9/v1\n`,
    );
    const p = spawnCli(["start", "--config", file]);
    const started = Date.now();
    let ok = false;
    while (Date.now() - started < 15_000 && !ok) {
      ok = await fetch(`http://127.0.0.1:${port}/healthz`).then(
        (r) => r.status === 200,
        () => false,
      );
      if (!ok) await new Promise((r) => setTimeout(r, 100));
    }
    expect(ok, p.output()).toBe(true);
    p.child.kill("SIGTERM");
    expect(await p.exited).toBe(0);
  });
});
