/**
 * The embedded agent on each storage kind, over the mock model, through the agent directory (a
 * tenant's checkpointer, as the gateway gets it): a 30-turn conversation with a tool call every
 * turn keeps at most two checkpoints per namespace and far fewer bytes than with the full history,
 * and reads back whole; a question asked on turn 21 is answered after a restart and the
 * conversation goes on; another tenant's thread of the same id is untouched.
 *
 * The figures (bytes after 30 turns, both settings) are printed; see src/storage/README.md.
 */
import { randomBytes } from "node:crypto";
import { statSync } from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { tool } from "langchain";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { DEFAULT_AGENT } from "../../src/config/agents.js";
import { AgentDirectory } from "../../src/harness/directory.js";
import type { Harness, HistoryEntry } from "../../src/harness/types.js";
import { checkpointSchema } from "../../src/storage/postgres/index.js";
import { type MockModel, startMockModel } from "../fakes/openai.js";
import { collect, configFor, last, memoryLogger, tempDir } from "../harness/helpers.js";
import { adminQuery, postgresUrl } from "../helpers/postgres.js";

const lookup = tool(async ({ city }) => `It is sunny in ${city}.`, {
  name: "lookup_weather",
  description: "weather",
  schema: z.object({ city: z.string() }),
});

/** About what a short chat message holds. */
const FILLER = "and tell me whether I need an umbrella on the way to work tomorrow morning";

/** One storage kind: its `storage:` section, and what one tenant's thread holds in it. */
interface Kind {
  storage(dir: string, history: "latest" | "all"): Record<string, unknown>;
  /** Checkpoints of the tenant's thread, per namespace. */
  rows(dir: string, tenant: string, threadId: string): Promise<Record<string, number>>;
  /** Bytes the storage holds once the agents closed: the SQLite file; on PostgreSQL the tenant's rows. */
  bytes(dir: string, tenant: string): Promise<number>;
  tenant(name: string): string;
}

const schemas: string[] = [];
let mock: MockModel | undefined;
const directories: AgentDirectory[] = [];
afterEach(async () => {
  for (const d of directories.splice(0)) await d.close();
  await mock?.close();
  mock = undefined;
});
afterAll(async () => {
  for (const schema of schemas) await adminQuery(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
});

const sqliteFile = (dir: string) => path.join(dir, "state", "antler.db");
const sqlite: Kind = {
  storage: (_dir, history) => ({ path: "./state/antler.db", checkpoint_history: history }),
  rows: async (dir, tenant, threadId) => {
    const db = new Database(sqliteFile(dir), { readonly: true });
    try {
      const rows = db
        .prepare(`SELECT checkpoint_ns AS ns, count(*) AS n FROM checkpoints WHERE thread_id = ?
          AND json_extract(CAST(metadata AS TEXT), '$.tenant') = ? GROUP BY checkpoint_ns`)
        .all(threadId, tenant) as Array<{ ns: string; n: number }>;
      return Object.fromEntries(rows.map((r) => [r.ns, r.n]));
    } finally {
      db.close();
    }
  },
  bytes: async (dir) => statSync(sqliteFile(dir)).size,
  tenant: (name) => name,
};

const TABLES = ["checkpoints", "checkpoint_blobs", "checkpoint_writes"];
const postgres: Kind = {
  storage: (_dir, history) => ({ kind: "postgres", url: postgresUrl(), pool_size: 3, checkpoint_history: history }),
  rows: async (_dir, tenant, threadId) => {
    const rows = await adminQuery<{ ns: string; n: string }>(
      `SELECT checkpoint_ns AS ns, count(*) AS n FROM "${checkpointSchema(tenant)}".checkpoints WHERE thread_id = $1 GROUP BY checkpoint_ns`,
      [threadId],
    );
    return Object.fromEntries(rows.map((r) => [r.ns, Number(r.n)]));
  },
  // The live rows' bytes: the tables' files keep dead rows' space until autovacuum reuses it.
  bytes: async (_dir, tenant) => {
    let total = 0;
    for (const table of TABLES) {
      const [row] = await adminQuery<{ b: string | null }>(
        `SELECT sum(pg_column_size(t.*)) AS b FROM "${checkpointSchema(tenant)}".${table} t`,
      );
      total += Number(row?.b ?? 0);
    }
    return total;
  },
  tenant: (name) => {
    const tenant = `${name}_${randomBytes(4).toString("hex")}`;
    schemas.push(checkpointSchema(tenant));
    return tenant;
  },
};

async function openAgents(kind: Kind, dir: string, history: "latest" | "all", tenants: string[]): Promise<AgentDirectory> {
  if (!mock) throw new Error("no mock model");
  const config = configFor(mock, {
    storage: kind.storage(dir, history),
    tenants: Object.fromEntries(tenants.map((t) => [t, {}])),
  });
  const directory = await AgentDirectory.open({ config, baseDir: dir, logger: memoryLogger().logger, tools: [lookup] }, tenants);
  directories.push(directory);
  return directory;
}

async function close(directory: AgentDirectory): Promise<void> {
  directories.splice(directories.indexOf(directory), 1);
  await directory.close();
}

/** Turns `from`..`to`: each asks, the model looks the city up, then answers. */
async function converse(harness: Harness, threadId: string, from: number, to: number): Promise<void> {
  for (let i = from; i <= to; i++) {
    mock?.enqueue(
      {
        text: `Let me look up City ${i}.`,
        toolCalls: [{ name: "lookup_weather", args: { city: `City ${i}` }, id: `call_${i}` }],
      },
      { text: `Turn ${i}: it is sunny in City ${i}, so no umbrella.` },
    );
    const events = await collect(harness.run(threadId, `Turn ${i}: what is the weather in City ${i}, ${FILLER}?`));
    expect(last(events)).toMatchObject({ type: "done" });
  }
}

const said = (entries: HistoryEntry[]) => entries.map((e) => `${e.role}: ${e.text}`);

describe.each([
  ["sqlite", sqlite],
  ["postgres", postgres],
])("the embedded agent on %s", (label, kind) => {
  it("keeps a 30-turn conversation in two checkpoints, in far fewer bytes than the full history, and reads it back whole", async () => {
    mock = await startMockModel();
    const figures: Record<string, number> = {};
    const histories: Record<string, string[]> = {};
    for (const history of ["all", "latest"] as const) {
      const dir = tempDir();
      const tenant = kind.tenant(`h${history}`);
      const agents = await openAgents(kind, dir, history, [tenant]);
      const harness = await agents.harness(tenant, DEFAULT_AGENT);
      await converse(harness, "dm", 1, 30);
      histories[history] = said((await harness.history?.("dm")) ?? []);
      const rows = await kind.rows(dir, tenant, "dm");
      if (history === "latest") {
        expect(Object.keys(rows)).toEqual([""]);
        expect(rows[""]).toBeLessThanOrEqual(2);
      } else {
        expect(rows[""]).toBeGreaterThan(60);
      }
      await close(agents);
      figures[history] = await kind.bytes(dir, tenant);
    }
    process.stdout.write(`[checkpoint-history] ${label}, 30 turns: all ${figures.all} bytes, latest ${figures.latest} bytes\n`);
    expect(figures.latest).toBeLessThan((figures.all ?? 0) / 5);
    expect(histories.latest).toEqual(histories.all);
    expect(histories.latest?.filter((l) => l.startsWith("user: "))).toHaveLength(30);
    expect(histories.latest?.slice(-3)).toEqual([
      `user: Turn 30: what is the weather in City 30, ${FILLER}?`,
      "assistant: Let me look up City 30.",
      "assistant: Turn 30: it is sunny in City 30, so no umbrella.",
    ]);
  });

  it("answers a question asked on turn 21 after a restart, goes on, and leaves another tenant's thread of the same id alone", async () => {
    mock = await startMockModel();
    const dir = tempDir();
    const [mine, theirs] = [kind.tenant("mine"), kind.tenant("theirs")];
    let agents = await openAgents(kind, dir, "latest", [mine, theirs]);
    await converse(await agents.harness(theirs, DEFAULT_AGENT), "dm", 1, 2);
    const theirRows = await kind.rows(dir, theirs, "dm");
    const theirHistory = said((await (await agents.harness(theirs, DEFAULT_AGENT)).history?.("dm")) ?? []);

    const harness = await agents.harness(mine, DEFAULT_AGENT);
    await converse(harness, "dm", 1, 20);
    mock.enqueue({
      toolCalls: [
        { name: "ask_clarification", id: "call_q", args: { question: "Deploy to which region?", options: ["eu", "us"] } },
      ],
    });
    const asked = await collect(harness.run("dm", "Turn 21: deploy it"));
    expect(last(asked)).toMatchObject({ type: "clarification", question: "Deploy to which region?" });
    expect(Object.values(await kind.rows(dir, mine, "dm")).every((n) => n <= 2)).toBe(true);
    await close(agents);

    agents = await openAgents(kind, dir, "latest", [mine, theirs]);
    const again = await agents.harness(mine, DEFAULT_AGENT);
    expect(await again.getThread("dm")).toMatchObject({ pending: { question: "Deploy to which region?" } });
    mock.enqueue({ text: "Deploying to eu." });
    expect(last(await collect(again.resume("dm", "eu")))).toMatchObject({ type: "done", text: "Deploying to eu." });
    expect(mock.requests.at(-1)?.messages.at(-1)).toMatchObject({ role: "tool", tool_call_id: "call_q", content: "eu" });
    await converse(again, "dm", 22, 26);

    const history = said((await again.history?.("dm")) ?? []);
    expect(history.filter((l) => l.startsWith("user: "))).toHaveLength(26);
    expect(history).toContain(`user: Turn 1: what is the weather in City 1, ${FILLER}?`);
    expect(history.join("\n")).toContain("Deploy to which region?");
    expect(history.at(-1)).toBe("assistant: Turn 26: it is sunny in City 26, so no umbrella.");
    // The model was given the whole conversation on the last turn.
    expect(mock.requests.at(-1)?.messages.filter((m) => m.role === "user")).toHaveLength(26);
    expect(Object.values(await kind.rows(dir, mine, "dm")).every((n) => n <= 2)).toBe(true);

    expect(await kind.rows(dir, theirs, "dm")).toEqual(theirRows);
    expect(said((await (await agents.harness(theirs, DEFAULT_AGENT)).history?.("dm")) ?? [])).toEqual(theirHistory);
  });
});
