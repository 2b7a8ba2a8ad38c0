/**
 * `/stop` across replicas when the owner's listening connection is down, on a real PostgreSQL:
 * the request waits in the store (under row-level security) and the owner applies it once its
 * connection is back, or on its heartbeat. A proxy in front of one replica cuts only its
 * broadcast connection (the one that sent `LISTEN`), and keeps cutting it until mended.
 */
import { afterEach, describe, expect, it } from "vitest";
import { MESSAGES } from "../../src/harness/run-errors.js";
import { Coordinator } from "../../src/replicas/coordinator.js";
import { StopRequests } from "../../src/replicas/stop-requests.js";
import { eventually, sleep, startTestGateway, testLogger } from "../../src/testing/gateway.js";
import { startMockModel } from "../../src/testing/mock-model.js";
import { LoopbackWorld } from "../fakes/loopback.js";
import { PartitionProxy } from "../helpers/partition-proxy.js";
import { freshSchema } from "../helpers/postgres.js";

const LISTEN = "LISTEN antler_replicas";
const cleanup: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step().catch(() => undefined);
});

const timing = { heartbeatMs: 200, leaseMs: 1_000 };

/** Two coordinators on a fresh schema: the owner's connections go through a proxy the test can cut. */
async function ownerBehindProxy() {
  const { url } = await freshSchema("stop");
  const { proxy, url: through } = await PartitionProxy.start(url);
  cleanup.push(() => proxy.close());
  const owner = await Coordinator.open({ connection: { url: through }, id: "owner", logger: testLogger(), ...timing });
  cleanup.push(() => owner.close());
  const sender = await Coordinator.open({ connection: { url }, id: "sender", logger: testLogger(), ...timing });
  cleanup.push(() => sender.close());
  return { url, proxy, owner, sender };
}

describe("/stop between replicas, with the owner's listening connection down", () => {
  it("reaches the reply although the owner's listening connection was cut: the user reads the stopped notice once", async () => {
    const { url } = await freshSchema("stop");
    const { proxy, url: through } = await PartitionProxy.start(url);
    cleanup.push(() => proxy.close());
    const model = await startMockModel();
    cleanup.push(() => model.close());
    // A reply of about 20 s, far longer than the test needs to stop it.
    const story = "a long story ".repeat(40).trim();
    model.setDefault({ text: story, chunkSize: 2, delayMs: 80 });
    // Each replica has the same channel; each world is the platform as that replica sees it.
    const owned = new LoopbackWorld();
    const other = new LoopbackWorld();
    const owner = await startTestGateway({
      channels: { loop: owned.channelConfig() },
      model,
      storage: { kind: "postgres", url: through },
      replicaId: "owner",
    });
    cleanup.push(() => owner.stop(false));
    const elsewhere = await startTestGateway({
      channels: { loop: other.channelConfig() },
      model,
      storage: { kind: "postgres", url },
      replicaId: "elsewhere",
    });
    cleanup.push(() => elsewhere.stop(false));
    const notices = () => owned.botMessages().filter((m) => m.text.includes(MESSAGES.cancelled));

    await owned.userSays("tell me a long story", { eventId: "story-1" });
    await eventually(() => owned.botMessages().some((m) => m.text.length > 0), 15_000, "the reply streaming on the owner");
    proxy.sever(LISTEN);
    await eventually(() => proxy.severed > 0, 5_000, "the owner's listening connection cut");
    // Event ids of their own: the two worlds would otherwise number their events alike.
    await other.userSays("/stop", { eventId: "stop-1" });
    await elsewhere.gateway.messageDispatcher!.idle();
    proxy.mend();

    await eventually(() => notices().length > 0, 15_000, "the stopped notice on the owner");
    await eventually(async () => (await tenantRows(url, "default")).length === 0, 10_000, "the request taken from the store");
    // Read once: later heartbeats find nothing to apply, so the notice stays single.
    await sleep(2_000);
    expect(notices()).toHaveLength(1);
    expect(owned.botMessages().some((m) => m.text.includes(story))).toBe(false);
    expect(other.botMessages().map((m) => m.text)).toEqual([]);

    // The listening connection is back: the next /stop arrives by broadcast.
    const before = owned.botMessages().length;
    await owned.userSays("another long story, please", { eventId: "story-2" });
    await eventually(() => owned.botMessages().length > before, 15_000, "the second reply streaming");
    await other.userSays("/stop", { eventId: "stop-2" });
    await eventually(() => notices().length === 2, 15_000, "the second stop");
  });

  it("is applied when the broadcast connection is back, with nothing read on a timer, and only once", async () => {
    const { url, proxy, owner, sender } = await ownerBehindProxy();
    const applied: Array<{ key: string; madeMsAgo: number }> = [];
    const owned = new StopRequests(owner, {
      logger: testLogger(),
      apply: (key, madeMsAgo) => applied.push({ key, madeMsAgo }),
      pollMs: 0,
    });
    owned.start();
    cleanup.push(() => owned.close());
    const sending = new StopRequests(sender, { logger: testLogger(), apply: () => undefined, pollMs: 0 });
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const work = owner.withConversation("acme", "chat-1", () => held);
    cleanup.push(async () => {
      release();
      await work;
    });
    await eventually(() => sender.heldElsewhere("acme", "chat-1"), 5_000, "the owner holds chat-1");
    proxy.sever(LISTEN);
    await eventually(() => proxy.severed > 0, 5_000, "the owner's listening connection cut");
    expect(await sending.send("acme", "chat-1")).toBe(true);
    // Nobody else holds "chat-2": there is no one to ask.
    expect(await sending.send("acme", "chat-2")).toBe(false);
    // Stored for the owner, and visible only under its tenant.
    const stored = await tenantRows(url, "acme");
    expect(stored.map((r) => [r.key, r.replica, r.requested_by])).toEqual([["chat-1", "owner", "sender"]]);
    expect(await tenantRows(url, "default")).toEqual([]);
    expect(await tenantRows(url, undefined)).toEqual([]);
    await sleep(1_000);
    expect(applied, "nothing arrives while the connection is down").toEqual([]);
    proxy.mend();
    await eventually(() => applied.length > 0, 10_000, "the request applied after the reconnect");
    expect(applied.map((a) => a.key)).toEqual(["chat-1"]);
    expect(applied[0]!.madeMsAgo, "its age, so a reply begun after it is not stopped").toBeGreaterThanOrEqual(900);
    // The broadcast connection works again, and the stored request was read once.
    expect(await sending.send("acme", "chat-1")).toBe(true);
    await eventually(() => applied.length === 2, 5_000, "the next request by broadcast");
    expect(applied[1]).toEqual({ key: "chat-1", madeMsAgo: 0 });
    await eventually(async () => (await tenantRows(url, "acme")).length === 0, 5_000, "the broadcast request cleared");
  });

  it("is read on the heartbeat when the broadcast connection went silent without an error", async () => {
    const { proxy, owner, sender } = await ownerBehindProxy();
    const applied: string[] = [];
    const owned = new StopRequests(owner, { logger: testLogger(), apply: (key) => applied.push(key) });
    owned.start();
    cleanup.push(() => owned.close());
    const sending = new StopRequests(sender, { logger: testLogger(), apply: () => undefined, pollMs: 0 });
    // The owner stops hearing broadcasts, with no error: notifications sent to it are dropped.
    await owner.withConversation("default", "quiet", async () => {
      proxy.mute(LISTEN);
      expect(await sending.send("default", "quiet")).toBe(true);
      await eventually(() => applied.length > 0, 10_000, "the request read on a heartbeat");
    });
    proxy.mend();
    expect(applied).toEqual(["quiet"]);
  });
});

describe("a stop request applied late", () => {
  it("stops a reply that began before it was made, never a later one", async () => {
    const world = new LoopbackWorld();
    const model = await startMockModel();
    cleanup.push(() => model.close());
    model.setDefault({ text: "a long story ".repeat(40).trim(), chunkSize: 2, delayMs: 80 });
    const gw = await startTestGateway({ channels: { loop: world.channelConfig() }, model });
    cleanup.push(() => gw.stop(false));
    const dispatcher = gw.gateway.messageDispatcher!;
    await world.userSays("tell me a long story");
    await eventually(() => world.botMessages().some((m) => m.text.length > 0), 15_000, "the reply streaming");
    // A request made a minute ago is older than this reply: it was meant for an earlier one.
    expect(dispatcher.stopConversation("loop:w:dm1", 60_000)).toBe(false);
    await sleep(500);
    expect(world.botMessages().some((m) => m.text.includes(MESSAGES.cancelled))).toBe(false);
    // The reply began over 500 ms ago: a request made 400 ms ago is for it.
    expect(dispatcher.stopConversation("loop:w:dm1", 400)).toBe(true);
    await eventually(() => world.botMessages().some((m) => m.text.includes(MESSAGES.cancelled)), 10_000, "the stop");
    expect(dispatcher.stopConversation("loop:w:dm1")).toBe(false);
  });
});

/** The stop requests a connection of `tenant` sees (row-level security, as the table's owner). */
async function tenantRows(url: string, tenant: string | undefined) {
  const { default: pg } = await import("pg");
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query("BEGIN");
    if (tenant !== undefined) await client.query("SELECT set_config('antler.tenant', $1, true)", [tenant]);
    const { rows } = await client.query<{ key: string; replica: string; requested_by: string }>(
      "SELECT key, replica, requested_by FROM antler_stop_requests ORDER BY id",
    );
    await client.query("COMMIT");
    return rows;
  } finally {
    await client.end();
  }
}
