/**
 * Agent checkpoints on PostgreSQL: each tenant's in a schema of its own, driven by a real
 * LangGraph graph; and the embedded agent keeping a conversation across a gateway restart.
 */
import { randomBytes } from "node:crypto";
import { Command } from "@langchain/langgraph";
import { afterEach, describe, expect, it } from "vitest";
import { createLogger } from "../../src/log/logger.js";
import { checkpointSchema, PostgresCheckpoints } from "../../src/storage/postgres/index.js";
import { eventually, startTestGateway, type TestGateway } from "../contract/gateway.js";
import { LoopbackWorld } from "../fakes/loopback.js";
import { contentText, type MockModel, startMockModel } from "../fakes/openai.js";
import { adminQuery, freshSchema, postgresUrl } from "../helpers/postgres.js";
import { pausingGraph } from "./pausing-graph.js";

/** The loopback channel's direct chat (channel `loop`, chat `dm1`). */
const KEY = "loop:w:dm1";

const thread = (id: string) => ({ configurable: { thread_id: id } });

const checkpoints: PostgresCheckpoints[] = [];
const gateways: TestGateway[] = [];
const models: MockModel[] = [];
afterEach(async () => {
  for (const gw of gateways.splice(0)) await gw.stop(false).catch(() => undefined);
  for (const m of models.splice(0)) await m.close();
  await Promise.all(checkpoints.splice(0).map((c) => c.close()));
});

function open(): PostgresCheckpoints {
  const opened = new PostgresCheckpoints({ url: postgresUrl(), poolSize: 3 });
  checkpoints.push(opened);
  return opened;
}

describe("PostgresCheckpoints", () => {
  it("keeps each tenant's checkpoints in its own schema: another tenant sees, resumes and deletes none of them", async () => {
    const suffix = randomBytes(4).toString("hex");
    const [tenantA, tenantB] = [`a_${suffix}`, `b_${suffix}`];
    const store = open();
    const a = await store.saver(tenantA);
    const b = await store.saver(tenantB);
    const graphA = pausingGraph(a);
    const graphB = pausingGraph(b);
    await graphA.invoke({ log: ["a1"] }, thread("t1"));
    expect((await graphB.getState(thread("t1"))).values).toEqual({});
    // B's answer reaches no question: its run starts on an empty thread of its own.
    expect(await graphB.invoke(new Command({ resume: "forged" }), thread("t1"))).toEqual({ count: 0, log: [] });
    await graphB.invoke({ log: ["b1"] }, thread("t2"));
    await b.deleteThread("t1");
    expect(await graphA.invoke(new Command({ resume: "yes" }), thread("t1"))).toEqual({ count: 1, log: ["a1", "yes"] });
    expect((await graphB.getState(thread("t2"))).values).toEqual({ count: 1, log: ["b1"] });

    const threadsIn = async (tenant: string) =>
      (
        await adminQuery<{ thread_id: string }>(
          `SELECT DISTINCT thread_id FROM "${checkpointSchema(tenant)}".checkpoints ORDER BY thread_id`,
        )
      ).map((r) => r.thread_id);
    expect(await threadsIn(tenantA)).toEqual(["t1"]);
    expect(await threadsIn(tenantB)).toEqual(["t2"]);
  });

  it("sets up a tenant's tables once when several replicas start at once", async () => {
    const tenant = `c_${randomBytes(4).toString("hex")}`;
    const savers = await Promise.all([open(), open(), open(), open()].map((c) => c.saver(tenant)));
    await pausingGraph(savers[0]!).invoke({ log: ["x"] }, thread("t"));
    expect((await pausingGraph(savers[3]!).getState(thread("t"))).values).toEqual({ count: 1, log: ["x"] });
    const migrations = await adminQuery(`SELECT v FROM "${checkpointSchema(tenant)}".checkpoint_migrations ORDER BY v`);
    expect(migrations.length).toBeGreaterThan(0);
    expect(new Set(migrations.map((m) => m.v)).size).toBe(migrations.length);
  });

  it("names a schema for any tenant name, and never one for two names", () => {
    expect(checkpointSchema("default")).toBe("antler_checkpoints_default");
    const odd = ["Acme", "acme ", 'O\'Brien "x"', "ä".repeat(80)].map(checkpointSchema);
    expect(new Set([...odd, checkpointSchema("acme")]).size).toBe(5);
    for (const name of odd) expect(name).toMatch(/^[a-z0-9_]{1,63}$/);
  });
});

describe("gateway on PostgreSQL", () => {
  it("warns at start when its replicas could open more connections than the server allows", async () => {
    const { url } = await freshSchema("gw");
    const lines: string[] = [];
    const logger = createLogger({ level: "warn", secrets: [], destination: { write: (l: string) => void lines.push(l) } });
    const world = new LoopbackWorld();
    // One replica, one tenant: 2 pools of 60 + 5 is over any server's 100 less its reserve.
    const storage = { kind: "postgres", url, pool_size: 60 };
    gateways.push(await startTestGateway({ channels: { loop: world.channelConfig() }, storage, logger }));
    const warning = lines.map((l) => JSON.parse(l) as { msg: string }).find((l) => l.msg.includes("PostgreSQL connections"));
    expect(warning?.msg).toMatch(
      /1 replica\(s\) with 1 tenant\(s\) and storage\.pool_size 60 may open 125 PostgreSQL connections/,
    );
  });

  it("keeps a conversation with the embedded agent across a restart", async () => {
    const { url } = await freshSchema("gw");
    const storage = { kind: "postgres", url, pool_size: 4 };
    const world = new LoopbackWorld();
    const model = await startMockModel();
    models.push(model);
    const boot = async (replicaId: string) => {
      const gw = await startTestGateway({ channels: { loop: world.channelConfig() }, model, storage, replicaId });
      gateways.push(gw);
      return gw;
    };
    const first = await boot("replica-one");
    expect(first.gateway.replicaId).toBe("replica-one");
    model.enqueue({ text: "Nice to meet you, Ada." });
    await world.userSays("my name is Ada");
    await eventually(() => world.botMessages().some((m) => m.text === "Nice to meet you, Ada."));
    const threadId = await first.gateway.bindingStore?.currentThread(KEY);
    expect(threadId).toBeDefined();
    await first.stop(false);

    const second = await boot("replica-two");
    model.enqueue({ text: "You are Ada." });
    await world.userSays("who am I?");
    await eventually(() => world.botMessages().some((m) => m.text === "You are Ada."));
    // The model saw the first exchange: the agent's state came back from PostgreSQL.
    const history = model.requests.at(-1)?.messages.map((m) => contentText(m.content));
    expect(history).toEqual(expect.arrayContaining(["my name is Ada", "Nice to meet you, Ada.", "who am I?"]));
    expect(await second.gateway.bindingStore?.currentThread(KEY)).toBe(threadId);
    // The reply is visible a moment before its inbox row is marked done.
    await eventually(async () => (await second.gateway.bindingStore?.unfinished())?.length === 0, 10_000, "the inbox done");
    const [row] = await adminQuery<{ n: string }>(
      `SELECT count(*) AS n FROM "${checkpointSchema("default")}".checkpoints WHERE thread_id = $1`,
      [threadId],
    );
    expect(Number(row?.n)).toBeGreaterThan(0);
  });
});
