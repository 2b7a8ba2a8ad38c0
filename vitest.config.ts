import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

const src = (file: string) => fileURLToPath(new URL(`./src/${file}`, import.meta.url));

export default defineConfig({
  // Antler's public entry points by their package names, as a user's code imports them
  // (examples/channel): the sources, since tests run without a build. package.json `exports`
  // maps the same names into dist/.
  resolve: {
    alias: [
      { find: /^antler$/, replacement: src("index.ts") },
      { find: /^antler\/channel$/, replacement: src("channel.ts") },
      { find: /^antler\/testing$/, replacement: src("testing/index.ts") },
    ],
  },
  test: {
    include: ["test/**/*.test.ts"],
    // A PostgreSQL database of the run's own, dropped at the end (see the file).
    globalSetup: ["test/helpers/postgres-global.ts"],
    // Every wait for a condition gets a deadline of at least 15 s (see the file).
    setupFiles: ["test/helpers/setup.ts"],
    // Safety nets against a hang, not measures of speed (see test/helpers/setup.ts): tests that
    // start processes take several times longer when both cores are busy.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Most test files wait on sockets and timers, not on the CPU: three run side by side even on
    // a 2-core machine (vitest's default there is one at a time, which took 12 minutes).
    maxWorkers: 3,
    // In CI only: a failed test runs once more before it counts. The suite's multi-process tests
    // share two cores with everything else on the machine. A test that fails twice fails the
    // run, and the JSON report keeps every retry, so a flaky test stays visible.
    retry: process.env.CI ? 1 : 0,
    reporters: ["default"],
  },
});
