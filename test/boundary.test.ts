import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "./helpers/cli.js";

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith(".ts"))
    .map((e) => path.join(e.parentPath, e.name));
}

const IMPORT = /(?:from\s+|import\s*\(\s*)["']([^"']+)["']/g;

function importsOf(file: string): string[] {
  return [...readFileSync(file, "utf8").matchAll(IMPORT)].map((m) => path.resolve(path.dirname(file), m[1] ?? ""));
}

describe("layering", () => {
  const rules: Array<[string, string[]]> = [
    ["src/harness", ["src/channels", "src/bindings", "src/server"]],
    ["src/bindings", ["src/channels", "src/harness", "src/server"]],
    ["src/config", ["src/channels", "src/harness", "src/bindings", "src/routing"]],
    ["src/routing", ["src/channels", "src/harness", "src/bindings", "src/server"]],
    ["src/storage", ["src/channels", "src/harness", "src/bindings", "src/server", "src/config"]],
    ["src/reflection", ["src/channels", "src/harness", "src/bindings", "src/config"]],
  ];
  for (const [layer, forbidden] of rules) {
    it(`${layer} never imports ${forbidden.join(", ")}`, () => {
      const bad: string[] = [];
      for (const file of sources(path.join(ROOT, layer))) {
        for (const target of importsOf(file)) {
          if (forbidden.some((f) => target.startsWith(path.join(ROOT, f))))
            bad.push(`${path.relative(ROOT, file)} -> ${path.relative(ROOT, target)}`);
        }
      }
      expect(bad).toEqual([]);
    });
  }

  it("reads process.env only in the config loader and the CLI", () => {
    const offenders = sources(path.join(ROOT, "src"))
      .filter((f) => /process\.env/.test(readFileSync(f, "utf8")))
      .map((f) => path.relative(ROOT, f))
      .filter((f) => f !== "src/cli.ts");
    expect(offenders).toEqual([]);
  });
});
