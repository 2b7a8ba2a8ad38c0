/**
 * PostgresBindingStore on the machine's PostgreSQL: the store contract (replica methods too), and
 * what only a shared database has: row-level security between tenants, and migrations that many
 * replicas start at once.
 */
import type pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { PostgresBindingStore } from "../../src/storage/postgres/index.js";
import { SCHEMA_NAME, STEPS } from "../../src/storage/postgres/schema.js";
import { migrate, openPool } from "../../src/storage/postgres.js";
import { bindingStoreContract } from "../../src/testing/index.js";
import { adminQuery, freshSchema, postgresUrl } from "../helpers/postgres.js";

let url = "";
bindingStoreContract(
  "postgres",
  async (clock) => {
    url = (await freshSchema("bind")).url;
    return PostgresBindingStore.open({ connection: { url }, replica: "replica-1", now: clock });
  },
  {
    async reopen(clock) {
      return PostgresBindingStore.open({ connection: { url }, replica: "replica-1", now: clock });
    },
    async openReplica(replica, clock) {
      return PostgresBindingStore.open({ connection: { url }, replica, now: clock });
    },
  },
);

const pools: pg.Pool[] = [];
const stores: PostgresBindingStore[] = [];
afterEach(async () => {
  await Promise.all(stores.splice(0).map((s) => s.close()));
  await Promise.all(pools.splice(0).map((p) => p.end()));
});

async function open(url: string, replica = "replica-1"): Promise<PostgresBindingStore> {
  const store = await PostgresBindingStore.open({ connection: { url }, replica, now: () => 5 });
  stores.push(store);
  return store;
}

/** A connection as the tenant's own pool opens it, for statements written by hand. */
function tenantPool(url: string, tenant?: string): pg.Pool {
  const pool = openPool({ url, poolSize: 2 }, tenant);
  pools.push(pool);
  return pool;
}

describe("PostgresBindingStore row-level security", () => {
  it("keeps a tenant's connection from reading or writing another tenant's rows, even by hand-written SQL", async () => {
    const { url } = await freshSchema("rls");
    const store = await open(url);
    const a = store.forTenant("a");
    const b = store.forTenant("b");
    await a.bindThread("k", "t-a");
    await b.bindThread("k", "t-b");
    await b.recordInbound({ channel: "tg", eventId: "1", key: "k", payload: { secret: "b's" } });
    await b.setPending({
      threadId: "t-b",
      key: "k",
      questionId: "q",
      interruptId: "i",
      question: "?",
      options: [],
      createdAt: 1,
    });
    await b.setChosenAgent("k", "research");
    await b.setConversationSetting("k", "queue", "steer");
    await b.enqueueOutbound({
      id: "o1",
      idempotencyKey: "i1",
      bodyHash: "h",
      kind: "send",
      channel: "tg",
      key: "k",
      payload: { text: "b's" },
      source: "api",
    });
    await b.putSchedule({
      id: "s1",
      origin: "api",
      name: "b's",
      channel: "tg",
      key: "k",
      target: {},
      timing: { at: 1, tz: "UTC" },
      action: { kind: "send", text: "b's" },
      thread: "fresh",
      state: "active",
      nextFireAt: 1,
    });

    const asA = tenantPool(url, "a");
    const count = async (sql: string) => Number((await asA.query<{ n: string }>(sql)).rows[0]?.n);
    // Asking for b's rows by name finds none of them; a's own are there.
    for (const table of [
      "antler_threads",
      "antler_inbox",
      "antler_pending",
      "antler_agent_choice",
      "antler_conversation_settings",
      "antler_outbox",
      "antler_schedules",
    ]) {
      expect(await count(`SELECT count(*) AS n FROM ${table} WHERE tenant = 'b'`)).toBe(0);
      expect(await count(`SELECT count(*) AS n FROM ${table} WHERE tenant <> 'a'`)).toBe(0);
    }
    expect((await asA.query("SELECT thread_id FROM antler_threads")).rows).toEqual([{ thread_id: "t-a" }]);
    // Changing or deleting b's rows touches nothing.
    expect((await asA.query("UPDATE antler_inbox SET state = 'done' WHERE tenant = 'b'")).rowCount).toBe(0);
    expect((await asA.query("UPDATE antler_threads SET current = false")).rowCount).toBe(1);
    expect((await asA.query("DELETE FROM antler_pending")).rowCount).toBe(0);
    expect((await asA.query("DELETE FROM antler_outbox")).rowCount).toBe(0);
    expect((await asA.query("UPDATE antler_schedules SET state = 'paused'")).rowCount).toBe(0);
    expect((await asA.query("DELETE FROM antler_agent_choice WHERE tenant = 'b'")).rowCount).toBe(0);
    expect((await asA.query("UPDATE antler_conversation_settings SET value = 'queue'")).rowCount).toBe(0);
    // Writing a row for b, or moving a's row to b, is refused.
    await expect(
      asA.query("INSERT INTO antler_threads (tenant, key, thread_id, created_at, current) VALUES ('b', 'k2', 't-x', 1, true)"),
    ).rejects.toThrow(/row-level security/);
    await expect(asA.query("UPDATE antler_threads SET tenant = 'b' WHERE tenant = 'a'")).rejects.toThrow(/row-level security/);

    // b's rows are as they were.
    expect(await b.currentThread("k")).toBe("t-b");
    expect(await b.getInbound("tg", "1")).toMatchObject({ state: "received", payload: { secret: "b's" } });
    expect((await b.getPending("t-b"))?.questionId).toBe("q");
    expect(await b.chosenAgent("k")).toBe("research");
    expect(await b.conversationSetting("k", "queue")).toBe("steer");
    expect(await b.getOutbound("o1")).toMatchObject({ state: "queued", payload: { text: "b's" } });
    expect(await b.getSchedule("s1")).toMatchObject({ state: "active", name: "b's" });

    // A connection without a tenant sees no row at all, and cannot write one.
    const nobody = tenantPool(url);
    expect(Number((await nobody.query<{ n: string }>("SELECT count(*) AS n FROM antler_threads")).rows[0]?.n)).toBe(0);
    await expect(
      nobody.query("INSERT INTO antler_agent_choice (tenant, key, agent, updated_at) VALUES ('a', 'k', 'x', 1)"),
    ).rejects.toThrow(/row-level security/);
    await expect(
      asA.query(
        "INSERT INTO antler_conversation_settings (tenant, key, name, value, updated_at) VALUES ('b', 'k', 'queue', 'x', 1)",
      ),
    ).rejects.toThrow(/row-level security/);
  });

  it("runs as a role row-level security applies to (no superuser, no BYPASSRLS)", async () => {
    const [role] = await adminQuery<{ rolsuper: boolean; rolbypassrls: boolean }>(
      "SELECT rolsuper, rolbypassrls FROM pg_roles WHERE rolname = current_user",
    );
    expect(role).toEqual({ rolsuper: false, rolbypassrls: false });
  });

  it("gives a tenant name with spaces and quotes its own rows", async () => {
    const { url } = await freshSchema("rls");
    const store = await open(url);
    const odd = store.forTenant("O'Brien & co \\ x");
    await odd.bindThread("k", "t-odd");
    expect(await odd.currentThread("k")).toBe("t-odd");
    expect(await store.forTenant("O'Brien").currentThread("k")).toBeUndefined();
  });
});

describe("PostgreSQL migrations", () => {
  it("leaves one consistent schema when five replicas open the store at once", async () => {
    const { url, schema } = await freshSchema("mig");
    const opened = await Promise.all(["r1", "r2", "r3", "r4", "r5"].map((r) => open(url, r)));
    const versions = await adminQuery(`SELECT name, version FROM ${schema}.antler_migrations ORDER BY version`);
    expect(versions).toEqual([
      { name: "bindings", version: 1 },
      { name: "bindings", version: 2 },
      { name: "bindings", version: 3 },
    ]);
    const tables = await adminQuery<{ tablename: string; rowsecurity: boolean }>(
      "SELECT tablename, rowsecurity FROM pg_tables WHERE schemaname = $1 ORDER BY tablename",
      [schema],
    );
    expect(tables).toEqual([
      { tablename: "antler_agent_choice", rowsecurity: true },
      { tablename: "antler_conversation_settings", rowsecurity: true },
      { tablename: "antler_inbox", rowsecurity: true },
      { tablename: "antler_migrations", rowsecurity: false },
      { tablename: "antler_outbox", rowsecurity: true },
      { tablename: "antler_pending", rowsecurity: true },
      { tablename: "antler_schedules", rowsecurity: true },
      { tablename: "antler_threads", rowsecurity: true },
    ]);
    // Every replica works on the same tables.
    expect(await opened[0]!.recordInbound({ channel: "tg", eventId: "1", key: "k", payload: {} })).toBe(true);
    expect(await opened[4]!.recordInbound({ channel: "tg", eventId: "1", key: "k", payload: {} })).toBe(false);
  });

  it("gives a schema an older Antler left at version 2 the conversation settings, with row-level security", async () => {
    const { url, schema } = await freshSchema("mig");
    const older = tenantPool(url, "default");
    expect(await migrate(older, SCHEMA_NAME, STEPS.slice(0, 2), 3)).toBe(2);
    await older.query("INSERT INTO antler_agent_choice (tenant, key, agent, updated_at) VALUES ('default', 'k', 'support', 3)");
    const store = await open(url);
    expect(await store.chosenAgent("k")).toBe("support");
    expect(await store.conversationSetting("k", "queue")).toBeUndefined();
    await store.setConversationSetting("k", "queue", "collect");
    await store.forTenant("acme").setConversationSetting("k", "queue", "steer");
    expect(await store.conversationSetting("k", "queue")).toBe("collect");
    expect(await adminQuery(`SELECT name, version, applied_at FROM ${schema}.antler_migrations ORDER BY version`)).toEqual([
      { name: "bindings", version: 1, applied_at: "3" },
      { name: "bindings", version: 2, applied_at: "3" },
      { name: "bindings", version: 3, applied_at: "5" },
    ]);
    // The new table has its policy: the default tenant's connection sees only its own row.
    expect((await older.query("SELECT value FROM antler_conversation_settings")).rows).toEqual([{ value: "collect" }]);
  });

  it("runs each step once however many pools migrate at once, and rolls a failed run back", async () => {
    const { url, schema } = await freshSchema("mig");
    const steps = [
      "CREATE TABLE runs (step integer NOT NULL)",
      "INSERT INTO runs VALUES (2)",
      async (client: pg.PoolClient) => {
        await client.query("SELECT pg_sleep(0.05)");
        await client.query("INSERT INTO runs VALUES (3)");
      },
    ];
    const five = Array.from({ length: 5 }, () => tenantPool(url));
    expect(await Promise.all(five.map((pool) => migrate(pool, "demo", steps, 7)))).toEqual([3, 3, 3, 3, 3]);
    expect(await adminQuery(`SELECT step FROM ${schema}.runs ORDER BY step`)).toEqual([{ step: 2 }, { step: 3 }]);
    // Another name keeps versions of its own in the same table.
    await migrate(five[0]!, "other", ["CREATE TABLE other_runs (x integer)"]);
    expect(await adminQuery(`SELECT name, version, applied_at FROM ${schema}.antler_migrations ORDER BY name, version`)).toEqual([
      { name: "demo", version: 1, applied_at: "7" },
      { name: "demo", version: 2, applied_at: "7" },
      { name: "demo", version: 3, applied_at: "7" },
      { name: "other", version: 1, applied_at: expect.any(String) },
    ]);
    // A later step that fails leaves the schema as it was, and the next run tries it again.
    const failing = [...steps, "INSERT INTO runs VALUES (4)", "SELECT no_such_function()"];
    await expect(migrate(five[1]!, "demo", failing)).rejects.toThrow(/no_such_function/);
    expect(await adminQuery(`SELECT max(step) AS top FROM ${schema}.runs`)).toEqual([{ top: 3 }]);
    await expect(migrate(five[1]!, "demo", steps.slice(0, 2))).rejects.toThrow(/version 3; this Antler knows 2/);
  });
});

describe("PostgreSQL pools", () => {
  it("outlive the server ending an idle connection: the next query opens another", async () => {
    const pool = tenantPool(postgresUrl(), "a");
    const [first] = (await pool.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows;
    await adminQuery("SELECT pg_terminate_backend($1)", [first?.pid]);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const [second] = (
      await pool.query<{ pid: number; tenant: string }>(
        "SELECT pg_backend_pid() AS pid, current_setting('antler.tenant') AS tenant",
      )
    ).rows;
    expect(second?.pid).not.toBe(first?.pid);
    expect(second?.tenant).toBe("a");
  });
});

describe("PostgresBindingStore.open", () => {
  it("names where it tried, without the password, when the database cannot be reached", async () => {
    const refused = PostgresBindingStore.open({
      connection: { url: "postgres://antler:hunter22@127.0.0.1:1/nowhere" },
      replica: "r",
    });
    await expect(refused).rejects.toThrow(/cannot open the binding store at 127\.0\.0\.1:1\/nowhere: .*ECONNREFUSED/);
    await expect(refused).rejects.not.toThrow(/hunter22/);
  });
});

describe("PostgresBindingStore for replicas and operators", () => {
  it("names the replicas that own unfinished events, and no others", async () => {
    const { url } = await freshSchema("own");
    const one = await open(url, "replica-1");
    const two = await open(url, "replica-2");
    await one.recordInbound({ channel: "tg", eventId: "1", key: "k1", payload: {} });
    await one.recordInbound({ channel: "tg", eventId: "2", key: "k2", payload: {} });
    await two.recordInbound({ channel: "tg", eventId: "3", key: "k3", payload: {} });
    await two.setInboxState("tg", "3", "done");
    expect((await one.unfinishedOwners()).sort()).toEqual(["replica-1"]);
    await one.setInboxState("tg", "1", "done");
    await one.setInboxState("tg", "2", "failed");
    expect(await one.unfinishedOwners()).toEqual([]);
    // Another tenant's events are not this view's.
    await two.forTenant("other").recordInbound({ channel: "tg", eventId: "4", key: "k4", payload: {} });
    expect(await one.unfinishedOwners()).toEqual([]);
  });

  it("says whether its database role skips row-level security", async () => {
    const { url } = await freshSchema("role");
    expect(await (await open(url)).rowSecurityBypassed(), "the test role is not a superuser").toBe(false);
    // The server's own superuser skips the policies (same schema, so nothing lands elsewhere).
    const superuser = new URL(url);
    superuser.username = "postgres";
    superuser.password = "";
    expect(await (await open(superuser.toString())).rowSecurityBypassed()).toBe(true);
  });
});
