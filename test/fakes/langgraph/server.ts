/**
 * A REAL LangGraph API server (`startServer` from `@langchain/langgraph-api/server`) inside the
 * test process, hosting the graphs of ./graphs.ts (`agent`, `question`, `deerflow`, `approval`, `steer`, `presenter`) on the mock
 * model, behind an `x-api-key` check (./auth.ts). Tests of the remote agent backend drive it
 * through `@langchain/langgraph-sdk` like a deployed LangGraph server.
 *
 * langgraph-api keeps its queue, checkpointer, graphs and auth in module globals: run ONE
 * server at a time per process (vitest runs each test file in its own fork).
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@langchain/langgraph-sdk";
import * as authModule from "./auth.js";
import { API_KEY_ENV, DEFAULT_API_KEY } from "./auth.js";
import * as graphsModule from "./graphs.js";
import { MODEL_URL_ENV } from "./graphs.js";

export interface LangGraphServer {
  /** Base URL, e.g. http://127.0.0.1:PORT (no trailing slash). */
  url: string;
  /** The key the server requires in `x-api-key`. */
  apiKey: string;
  /** An SDK client with the right key. */
  client: Client;
  /** Runs on every thread, all statuses. */
  runCount(): Promise<number>;
  /** Stops the server; safe to call twice. */
  close(): Promise<void>;
}

export interface LangGraphServerOptions {
  /** The mock model's base URL (`MockModel.url`, ending in /v1). */
  modelUrl: string;
  /** The key the server requires (default `antler-test-key`). */
  apiKey?: string;
}

/** Graph ids the server hosts. */
export const GRAPH_IDS = ["agent", "question", "deerflow", "approval", "steer", "presenter"] as const;

/**
 * langgraph-api loads graphs and auth with a native `import()` of a file path, and Node 20
 * cannot import a .ts file natively (vitest's transform does not reach that import). So the
 * server gets tiny .mjs shims that re-export the modules this file already imported, through
 * a global. Bonus: the server and the test share one instance of graphs.ts.
 */
const SHARED = Symbol.for("antler.test.langgraph");
const g = globalThis as { [SHARED]?: { graphs: typeof graphsModule; auth: typeof authModule; open: boolean } };
g[SHARED] ??= { graphs: graphsModule, auth: authModule, open: false };
const shared = g[SHARED];

export async function startLangGraphServer(options: LangGraphServerOptions): Promise<LangGraphServer> {
  if (shared.open) throw new Error("a LangGraph API server is already running in this process; close it first");
  const apiKey = options.apiKey ?? DEFAULT_API_KEY;
  process.env[MODEL_URL_ENV] = options.modelUrl;
  process.env[API_KEY_ENV] = apiKey;
  // langgraph-api reads LOG_LEVEL when its logging module loads (default "debug"): set it first,
  // hence the dynamic import.
  process.env.LOG_LEVEL ??= "error";
  const { startServer } = await import("@langchain/langgraph-api/server");

  // Its storage (.langgraph_api/*.json) goes under cwd: a fresh folder per start.
  const cwd = await mkdtemp(join(tmpdir(), "antler-langgraph-"));
  let started: Awaited<ReturnType<typeof startServer>>;
  try {
    const graphsFile = await writeShim(cwd, "graphs", GRAPH_IDS);
    const authFile = await writeShim(cwd, "auth", ["auth"]);
    started = await startServer({
      port: 0,
      host: "127.0.0.1",
      // More workers than runs any test has going at once (the restart test streams five).
      nWorkers: 8,
      cwd,
      graphs: Object.fromEntries(GRAPH_IDS.map((id) => [id, `${graphsFile}:${id}`])),
      // disable_studio_auth: otherwise `x-auth-scheme: langsmith` skips the key check.
      auth: { path: `${authFile}:auth`, disable_studio_auth: true },
    });
  } catch (err) {
    await rm(cwd, { recursive: true, force: true });
    throw err;
  }
  const { host, cleanup } = started;

  shared.open = true;
  const url = `http://${host}`;
  const client = new Client({ apiUrl: url, apiKey });
  let closing: Promise<void> | undefined;

  return {
    url,
    apiKey,
    client,
    async runCount() {
      const threads = await allPages((offset) => client.threads.search({ limit: PAGE, offset }));
      let n = 0;
      for (const t of threads) n += (await allPages((offset) => client.runs.list(t.thread_id, { limit: PAGE, offset }))).length;
      return n;
    },
    close() {
      closing ??= (async () => {
        // A run left going would keep calling the mock model and write into the deleted folder.
        await settleRuns(client).catch(() => undefined);
        await cleanup();
        await rm(cwd, { recursive: true, force: true });
        shared.open = false;
      })();
      return closing;
    },
  };
}

/** The server's largest `limit` for searches and lists. */
const PAGE = 1000;

async function allPages<T>(page: (offset: number) => Promise<T[]>): Promise<T[]> {
  const all: T[] = [];
  for (;;) {
    const items = await page(all.length);
    all.push(...items);
    if (items.length < PAGE) return all;
  }
}

/** Cancels pending and running runs, then waits (up to 5 s) until no thread is busy. */
async function settleRuns(client: Client): Promise<void> {
  const busy = () => allPages((offset) => client.threads.search({ status: "busy", limit: PAGE, offset }));
  for (const t of await busy()) {
    const runs = await allPages((offset) => client.runs.list(t.thread_id, { limit: PAGE, offset }));
    for (const r of runs) {
      if (r.status === "pending" || r.status === "running") await client.runs.cancel(t.thread_id, r.run_id, true);
    }
  }
  const deadline = Date.now() + 5_000;
  while ((await busy()).length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
}

async function writeShim(cwd: string, name: string, exports: readonly string[]): Promise<string> {
  const path = join(cwd, `${name}.mjs`);
  const source = exports
    .map((e) => `export const ${e} = globalThis[Symbol.for("antler.test.langgraph")].${name}.${e};`)
    .join("\n");
  await writeFile(path, `${source}\n`);
  return path;
}
