/**
 * The rooms of src/ and the one direction imports run between them (DESIGN.md's layout). Type
 * imports count: a type that points back up a layer ties the layers together just as much.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "./helpers/cli.js";

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith(".ts"))
    .map((e) => path.join(e.parentPath, e.name));
}

const IMPORT = /(?:from\s+|import\s*\(\s*)["']([^"']+)["']/g;

/** Relative imports of a file, resolved to the source file they name. */
function importsOf(file: string): string[] {
  return [...readFileSync(file, "utf8").matchAll(IMPORT)]
    .map((m) => m[1] ?? "")
    .filter((spec) => spec.startsWith("."))
    .map((spec) => path.resolve(path.dirname(file), spec).replace(/\.js$/, ".ts"));
}

const SRC = path.join(ROOT, "src");
const ADAPTERS = readdirSync(path.join(SRC, "channels"), { withFileTypes: true })
  .filter((e) => e.isDirectory() && !["kit", "markdown"].includes(e.name))
  .map((e) => `src/channels/${e.name}`);

/** The entry points and the program: only they may import everything. */
const TOP = [
  "src/gateway.ts",
  "src/index.ts",
  "src/channel.ts",
  "src/cli.ts",
  "src/doctor.ts",
  "src/preflight.ts",
  "src/supervisor.ts",
  "src/testing",
];
/** One folder per storage kind; only the registry (src/storage/index.ts) names them. */
const STORAGE_KINDS = readdirSync(path.join(SRC, "storage"), { withFileTypes: true })
  .filter((e) => e.isDirectory())
  .map((e) => `src/storage/${e.name}`);
/** The storage room above its root: the kinds, their contract and the registry. */
const STORAGE_ABOVE_ROOT = [...STORAGE_KINDS, "src/storage/kind.ts", "src/storage/index.ts"];
/** The storage root's low pieces: every file at src/storage/ but the kind contract and the registry. */
const STORAGE_ROOT = readdirSync(path.join(SRC, "storage"), { withFileTypes: true })
  .filter((e) => e.isFile() && e.name.endsWith(".ts") && !["kind.ts", "index.ts"].includes(e.name))
  .map((e) => `src/storage/${e.name}`);
const rules: Array<[string, string[]]> = [
  ["src/ops", TOP],
  ["src/core", ["src/ops", ...TOP]],
  ["src/media", ["src/core", "src/ops", ...TOP]],
  ["src/channels", ["src/core", "src/ops", "src/media", "src/bindings", "src/routing", "src/replicas", ...TOP]],
  [
    "src/harness",
    [
      "src/channels",
      "src/core",
      "src/ops",
      "src/media",
      "src/bindings",
      "src/server",
      "src/routing",
      "src/replicas",
      "src/schedules",
      ...TOP,
    ],
  ],
  // Schedules (timing, the per-conversation book, the agent's tools): on the store's contract and
  // the harness's types; the core fires them and the gateway hands the tools to the agents.
  [
    "src/schedules",
    [
      "src/channels",
      "src/core",
      "src/ops",
      "src/media",
      "src/server",
      "src/routing",
      "src/replicas",
      ...STORAGE_ABOVE_ROOT,
      ...TOP,
    ],
  ],
  [
    "src/routing",
    ["src/channels", "src/core", "src/ops", "src/media", "src/harness", "src/bindings", "src/server", "src/replicas", ...TOP],
  ],
  [
    "src/replicas",
    [
      "src/channels",
      "src/core",
      "src/ops",
      "src/media",
      "src/harness",
      "src/bindings",
      "src/server",
      "src/routing",
      ...STORAGE_ABOVE_ROOT,
      ...TOP,
    ],
  ],
  // The binding store's contract sits on the storage root's low pieces (json, tenant) only.
  [
    "src/bindings",
    [
      "src/channels",
      "src/core",
      "src/ops",
      "src/media",
      "src/harness",
      "src/server",
      "src/routing",
      "src/replicas",
      "src/config",
      "src/reflection",
      ...STORAGE_ABOVE_ROOT,
      ...TOP,
    ],
  ],
  [
    "src/server",
    [
      "src/channels",
      "src/core",
      "src/ops",
      "src/media",
      "src/harness",
      "src/bindings",
      "src/routing",
      "src/replicas",
      "src/storage",
      ...TOP,
    ],
  ],
  [
    "src/config",
    [
      "src/channels",
      "src/core",
      "src/ops",
      "src/media",
      "src/harness",
      "src/bindings",
      "src/server",
      "src/routing",
      "src/replicas",
      "src/reflection",
      ...STORAGE_ABOVE_ROOT,
      ...TOP,
    ],
  ],
  // The storage room as a whole: below everything that uses storage.
  [
    "src/storage",
    ["src/channels", "src/core", "src/ops", "src/media", "src/harness", "src/server", "src/routing", "src/config", ...TOP],
  ],
  // The storage root's low pieces (connections, pools, the SQLite file, tenant, json) import no
  // other room, nor the kinds built on them.
  ...STORAGE_ROOT.map((file): [string, string[]] => [
    file,
    [
      "src/channels",
      "src/core",
      "src/ops",
      "src/media",
      "src/harness",
      "src/bindings",
      "src/server",
      "src/routing",
      "src/replicas",
      "src/config",
      ...STORAGE_ABOVE_ROOT,
      ...TOP,
    ],
  ]),
  // A storage kind builds on the binding store's contract, the replicas and the storage root;
  // never on another kind, the registry, or what uses storage.
  ...STORAGE_KINDS.map((kind): [string, string[]] => [
    kind,
    [
      "src/channels",
      "src/core",
      "src/ops",
      "src/media",
      "src/harness",
      "src/server",
      "src/routing",
      "src/config",
      "src/storage/index.ts",
      ...STORAGE_KINDS.filter((other) => other !== kind),
      ...TOP,
    ],
  ]),
  // The kind contract and the registry: the kinds, their contract's types, the replicas.
  [
    "src/storage/kind.ts",
    [
      "src/channels",
      "src/core",
      "src/ops",
      "src/media",
      "src/harness",
      "src/server",
      "src/routing",
      "src/config",
      "src/storage/index.ts",
      ...STORAGE_KINDS,
      ...TOP,
    ],
  ],
  [
    "src/storage/index.ts",
    ["src/channels", "src/core", "src/ops", "src/media", "src/harness", "src/server", "src/routing", "src/config", ...TOP],
  ],
  [
    "src/reflection",
    [
      "src/channels",
      "src/core",
      "src/ops",
      "src/media",
      "src/harness",
      "src/bindings",
      "src/server",
      "src/routing",
      "src/replicas",
      "src/config",
      "src/storage",
      ...TOP,
    ],
  ],
  // What adapters are written with (antler/channel) pulls in no more than an adapter may import.
  [
    "src/channel.ts",
    [
      "src/core",
      "src/ops",
      "src/media",
      "src/bindings",
      "src/routing",
      "src/replicas",
      ...TOP.filter((t) => t !== "src/channel.ts"),
    ],
  ],
  // The kit serves every adapter and knows none of them.
  ["src/channels/kit", ADAPTERS],
  // An adapter uses the contract, the kit and the Markdown walker; never another adapter.
  ...ADAPTERS.map((a): [string, string[]] => [a, ADAPTERS.filter((b) => b !== a)]),
  // An agent backend uses the harness's shared pieces, never another backend; only a user's graph
  // runs on the embedded backend's runtime. Only the registry (backends.ts) knows them all.
  ["src/harness/embedded", ["src/harness/graph", "src/harness/remote", "src/harness/backends.ts"]],
  ["src/harness/graph", ["src/harness/remote", "src/harness/backends.ts"]],
  ["src/harness/remote", ["src/harness/embedded", "src/harness/graph", "src/harness/backends.ts"]],
];

function crossings(layer: string, forbidden: string[]): string[] {
  const bad: string[] = [];
  const root = path.join(ROOT, layer);
  for (const file of existsSync(root) && root.endsWith(".ts") ? [root] : sources(root)) {
    for (const target of importsOf(file)) {
      const hit = forbidden.find((f) => target === path.join(ROOT, f) || target.startsWith(path.join(ROOT, f) + path.sep));
      if (hit) bad.push(`${path.relative(ROOT, file)} -> ${path.relative(ROOT, target)}`);
    }
  }
  return bad;
}

describe("layering", () => {
  for (const [layer, forbidden] of rules) {
    it(`${layer} never imports ${forbidden.filter((f) => !TOP.includes(f)).join(", ") || "the entry points"}`, () => {
      expect(crossings(layer, forbidden)).toEqual([]);
    });
  }

  it("every room of src/ has a rule", () => {
    const rooms = readdirSync(SRC, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => `src/${e.name}`);
    const ruled = new Set([...rules.map(([layer]) => layer), ...TOP, "src/log"]);
    expect(rooms.filter((r) => !ruled.has(r))).toEqual([]);
  });

  it("only the storage registry imports a storage kind's folder", () => {
    const bad = sources(SRC).flatMap((file) => {
      const own = STORAGE_KINDS.find((kind) => file.startsWith(path.join(ROOT, kind) + path.sep));
      if (own || file === path.join(ROOT, "src/storage/index.ts")) return [];
      return importsOf(file)
        .filter((t) => STORAGE_KINDS.some((kind) => t.startsWith(path.join(ROOT, kind) + path.sep)))
        .map((t) => `${path.relative(ROOT, file)} -> ${path.relative(ROOT, t)}`);
    });
    expect(bad).toEqual([]);
  });

  it("src/log and src/errors.ts import no other room", () => {
    const files = [...sources(path.join(SRC, "log")), path.join(SRC, "errors.ts")];
    const bad = files.flatMap((f) =>
      importsOf(f)
        .filter((t) => !t.startsWith(path.join(SRC, "log")))
        .map((t) => `${path.relative(ROOT, f)} -> ${path.relative(ROOT, t)}`),
    );
    expect(bad).toEqual([]);
  });

  it("no import loop anywhere in src/, type imports included", () => {
    const graph = new Map(sources(SRC).map((f) => [f, importsOf(f).filter((t) => existsSync(t))]));
    const loops: string[] = [];
    const state = new Map<string, "open" | "done">();
    const stack: string[] = [];
    const visit = (file: string): void => {
      state.set(file, "open");
      stack.push(file);
      for (const next of graph.get(file) ?? []) {
        if (state.get(next) === "open")
          loops.push(
            stack
              .slice(stack.indexOf(next))
              .concat(next)
              .map((f) => path.relative(SRC, f))
              .join(" -> "),
          );
        else if (!state.has(next)) visit(next);
      }
      stack.pop();
      state.set(file, "done");
    };
    for (const file of graph.keys()) if (!state.has(file)) visit(file);
    expect(loops).toEqual([]);
  });

  it("reads process.env only in the config loader and the CLI", () => {
    const offenders = sources(SRC)
      .filter((f) => /process\.env/.test(readFileSync(f, "utf8")))
      .map((f) => path.relative(ROOT, f))
      .filter((f) => f !== "src/cli.ts");
    expect(offenders).toEqual([]);
  });
});
