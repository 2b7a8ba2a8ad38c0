/**
 * scripts/build.mjs, the build `npm start` and `npm run build` run, on a small project of its own:
 * `--if-stale` compiles only when an input changed and says which, runs no tsc when nothing did,
 * and dist/ follows src/ (removed modules and web chat files disappear, changed ones are copied).
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { ROOT } from "./helpers/cli.js";

const SCRIPT = path.join(ROOT, "scripts/build.mjs");
let project: string;

function write(rel: string, text: string): void {
  mkdirSync(path.dirname(path.join(project, rel)), { recursive: true });
  writeFileSync(path.join(project, rel), text);
}

/** Moves a file's mtime a minute ahead, as an editor's save would. */
function touch(rel: string): void {
  const later = new Date(Date.now() + 60_000);
  utimesSync(path.join(project, rel), later, later);
}

function run(...args: string[]): { code: number | null; output: string } {
  const r = spawnSync(process.execPath, [SCRIPT, ...args], { cwd: project, encoding: "utf8" });
  return { code: r.status, output: r.stdout + r.stderr };
}

const mtime = (rel: string) => statSync(path.join(project, rel)).mtimeMs;

describe("scripts/build.mjs", () => {
  beforeAll(() => {
    project = mkdtempSync(path.join(tmpdir(), "antler-build-"));
    write(
      "tsconfig.json",
      JSON.stringify({ compilerOptions: { target: "ES2022", module: "NodeNext", strict: true, types: [] } }),
    );
    write(
      "tsconfig.build.json",
      JSON.stringify({
        extends: "./tsconfig.json",
        compilerOptions: { rootDir: "src", outDir: "dist", incremental: true, tsBuildInfoFile: "dist/.tsbuildinfo" },
        include: ["src"],
      }),
    );
    write("src/cli.ts", 'import { two } from "./two.js";\nexport const one: number = two - 1;\n');
    write("src/two.ts", "export const two = 2;\n");
    write("src/gone.ts", "export const gone = true;\n");
    write("src/README.md", "# src\n");
    write("src/channels/web/public/index.html", "<p>v1</p>\n");
    write("src/channels/web/public/old.css", "p {}\n");
  });

  it("builds when there is no earlier build, and copies the web chat's files", { timeout: 60_000 }, () => {
    const first = run("--if-stale");
    expect(first.code, first.output).toBe(0);
    expect(first.output).toContain("building dist/ (no earlier build in dist/)");
    expect(readFileSync(path.join(project, "dist/cli.js"), "utf8")).toContain("two - 1");
    expect(readFileSync(path.join(project, "dist/channels/web/public/index.html"), "utf8")).toBe("<p>v1</p>\n");
  });

  it("runs no tsc when nothing changed, and says so", { timeout: 60_000 }, () => {
    const before = mtime("dist/cli.js");
    touch("src/README.md"); // documentation is not an input
    const again = run("--if-stale");
    expect(again.code, again.output).toBe(0);
    expect(again.output).toContain("dist/ is up to date");
    expect(again.output).not.toContain("building dist/");
    expect(mtime("dist/cli.js")).toBe(before);
  });

  it("rebuilds after a source file is touched, naming it", { timeout: 60_000 }, () => {
    write("src/two.ts", "export const two = 20;\n");
    touch("src/two.ts");
    const rebuilt = run("--if-stale");
    expect(rebuilt.code, rebuilt.output).toBe(0);
    expect(rebuilt.output).toContain("building dist/ (changed since the last build: src/two.ts)");
    expect(readFileSync(path.join(project, "dist/two.js"), "utf8")).toContain("20");
    expect(run("--if-stale").output).toContain("up to date");
  });

  it("drops the outputs of removed modules and follows the web chat's files", { timeout: 60_000 }, () => {
    expect(existsSync(path.join(project, "dist/gone.js"))).toBe(true);
    rmSync(path.join(project, "src/gone.ts"));
    rmSync(path.join(project, "src/channels/web/public/old.css"));
    write("src/channels/web/public/index.html", "<p>v2</p>\n");
    touch("src/channels/web/public/index.html");
    const rebuilt = run("--if-stale");
    expect(rebuilt.code, rebuilt.output).toBe(0);
    expect(rebuilt.output).toContain("src/gone.ts");
    for (const out of ["gone.js", "gone.d.ts", "channels/web/public/old.css"]) {
      expect(existsSync(path.join(project, "dist", out)), out).toBe(false);
    }
    expect(readFileSync(path.join(project, "dist/channels/web/public/index.html"), "utf8")).toBe("<p>v2</p>\n");
  });

  it("fails on a type error, and builds again on the next start", { timeout: 60_000 }, () => {
    write("src/two.ts", 'export const two: number = "two";\n');
    touch("src/two.ts");
    const failed = run("--if-stale");
    expect(failed.code).toBe(1);
    expect(failed.output).toContain("tsc -p tsconfig.build.json failed");
    write("src/two.ts", "export const two = 2;\n");
    const fixed = run("--if-stale");
    expect(fixed.code, fixed.output).toBe(0);
    expect(fixed.output).toContain("building dist/ (the last build did not finish)");
  });

  it("always compiles without --if-stale (npm run build)", { timeout: 60_000 }, () => {
    const forced = run();
    expect(forced.code, forced.output).toBe(0);
    expect(forced.output).toContain("building dist/");
  });
});
