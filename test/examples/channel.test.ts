/**
 * The example channel (examples/channel), loaded by `use:` like a user's own, passes the whole
 * channel contract; and it is written from Antler's public entry points alone.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { channelContract } from "antler/testing";
import { describe, expect, it } from "vitest";
import { EXAMPLE, relayDriver } from "./relay-driver.js";

channelContract("example relay (use:)", relayDriver);

const PUBLIC = new Set(["antler", "antler/channel", "antler/testing"]);
const IMPORT = /(?:from\s+|import\s*\(\s*|import\s+)["']([^"']+)["']/g;

describe("the example channel", () => {
  it("imports only antler, antler/channel, antler/testing, node: modules and its own files", () => {
    const files = readdirSync(EXAMPLE).filter((f) => /\.(ts|mjs|js)$/.test(f));
    expect(files).toContain("index.ts");
    const bad = files.flatMap((file) =>
      [...readFileSync(path.join(EXAMPLE, file), "utf8").matchAll(IMPORT)]
        .map((m) => m[1] ?? "")
        .filter((spec) => !(PUBLIC.has(spec) || spec.startsWith("node:") || /^\.\/[\w-]+\.js$/.test(spec)))
        .map((spec) => `${file} imports ${spec}`),
    );
    expect(bad).toEqual([]);
  });
});
