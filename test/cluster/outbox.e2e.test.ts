/**
 * Issue 31's multi-replica acceptance: what Antler says first (`POST /api/send`, schedules),
 * with three built gateway processes on one PostgreSQL database and the Telegram fake (polling:
 * the channel runs on one leader replica, which delivers; every replica takes API requests).
 * See README.md beside this file.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { until } from "../reliability/util.js";
import {
  call,
  getFromAny,
  log,
  type OutboxWorld,
  outboxRows,
  type ScheduleView,
  sendWithFailover,
  settleCount,
  startOutboxWorld,
  type Try,
} from "./outbox-world.js";
import { ensureBuilt } from "./replicas-build.js";

const REPLICAS = 3;

beforeAll(async () => {
  log(await ensureBuilt());
}, 240_000);

/** A cluster of its own for one describe block, ready before its test and closed after it. */
function useWorld(options: Parameters<typeof startOutboxWorld>[0]): () => OutboxWorld {
  let world: OutboxWorld | undefined;
  beforeAll(async () => {
    world = await startOutboxWorld(options);
  }, 120_000);
  afterAll(async () => {
    await world?.close();
  }, 30_000);
  return () => {
    if (!world) throw new Error("the cluster did not start");
    return world;
  };
}

describe("POST /api/send: 200 requests, each sent 3 times to different replicas, one replica SIGKILLed", () => {
  const CONVERSATIONS = 4;
  const PER_CONVERSATION = 50;
  const TOTAL = CONVERSATIONS * PER_CONVERSATION;
  const chatOf = (c: number) => 800_000 + c;
  const world = useWorld({
    replicas: REPLICAS,
    chats: Array.from({ length: CONVERSATIONS }, (_, i) => chatOf(i + 1)),
    sections: { outbox: { poll_ms: 200, lease_ms: 3_000, retry_backoff_ms: 200 } },
  });

  it("posts every message exactly once, in each conversation's order, and every entry ends sent", async () => {
    const { telegram, cluster } = world();
    const members = cluster.members;
    const leader = await cluster.waitLeader("telegram", 30_000);
    // The replica killed is not the Telegram leader: Telegram takes no idempotency key, so a
    // delivering process killed between the platform's accept and the record could post one part
    // twice (the crash window of src/core/outbox/README.md). Killing the leader is the schedule
    // test's case below; here only API requests meet the dead replica.
    const victim = members.find((r) => r !== leader);
    if (!victim) throw new Error("no replica besides the leader");
    let accepted = 0;
    let killedAt = 0;
    let killing: Promise<unknown> | undefined;
    const tries = new Map<string, Try[]>();
    const ids = new Map<number, string[]>();
    const started = Date.now();

    /** One request sent 3 times with the same key, from 3 different replicas; every third one's tries at once. */
    async function request(c: number, n: number): Promise<void> {
      const key = `send-${c}-${n}`;
      const body = { channel: "telegram", target: { user: String(chatOf(c)) }, text: `msg ${c} ${n}` };
      const first = c + n;
      const sendFrom = (k: number) => sendWithFailover(members, first + k, "/api/send", body, key);
      const all =
        n % 3 === 0
          ? (await Promise.all([0, 1, 2].map(sendFrom))).flat()
          : [...(await sendFrom(0)), ...(await sendFrom(1)), ...(await sendFrom(2))];
      tries.set(key, all);
      const ok = all.find((t) => t.status === 202 || t.status === 200);
      ids.set(c, [...(ids.get(c) ?? []), String(ok?.body.id)]);
      accepted += 1;
      if (accepted === TOTAL / 2) {
        killedAt = Date.now();
        killing = victim?.process.kill("SIGKILL");
      }
    }
    /** A conversation's messages one after another (the next once the last was accepted); conversations side by side. */
    await Promise.all(
      Array.from({ length: CONVERSATIONS }, async (_, i) => {
        for (let n = 1; n <= PER_CONVERSATION; n++) await request(i + 1, n);
      }),
    );
    const acceptedIn = Date.now() - started;
    await killing;
    expect(victim.alive).toBe(false);

    // What the client heard: each key accepted by one replica (202) at most, every other try a
    // replay (200 with the header); a try that found the victim dead went on to another replica.
    const all = [...tries.values()].flat();
    const problems = [...tries.entries()].flatMap(([key, ts]) => {
      const answered = ts.filter((t) => t.status !== "unreachable");
      const bad = answered.filter((t) => !(t.status === 202 || (t.status === 200 && t.replayed)));
      const fresh = answered.filter((t) => t.status === 202).length;
      const idsSeen = new Set(answered.map((t) => t.body.id));
      return bad.length > 0 || fresh > 1 || answered.length !== 3 || idsSeen.size !== 1
        ? [`${key}: ${ts.map((t) => `${t.replica} ${t.status}${t.replayed ? " (replay)" : ""}`).join(", ")}`]
        : [];
    });
    expect(problems, problems.slice(0, 5).join("\n")).toEqual([]);
    const unreachable = all.filter((t) => t.status === "unreachable");
    expect(unreachable.length).toBeGreaterThan(0);
    expect(unreachable.every((t) => t.replica === victim.name)).toBe(true);

    // What the chats show: every text once, in the order it was accepted.
    const chats = Array.from({ length: CONVERSATIONS }, (_, i) => chatOf(i + 1));
    const posted = () => chats.reduce((sum, chat) => sum + telegram.botMessages(chat).length, 0);
    const deliveredIn = await settleCount(posted, TOTAL, 120_000);
    for (const [i, chat] of chats.entries()) {
      const texts = telegram.botMessages(chat).map((m) => m.text);
      const expected = Array.from({ length: PER_CONVERSATION }, (_, k) => `msg ${i + 1} ${k + 1}`);
      expect(texts, `chat ${chat}\n${cluster.evidence().join("\n")}`).toEqual(expected);
    }
    expect(posted()).toBe(TOTAL);

    // Only the leader delivered (it runs the channel); the others never called Telegram to post.
    const senders = new Set(telegram.calls.filter((c) => c.method === "sendMessage").map((c) => c.client));
    expect([...senders]).toEqual([leader.name]);

    // Every entry ends sent, as a surviving replica tells it, with the message it posted.
    const survivors = members.filter((r) => r.alive);
    const views = new Map<string, Record<string, unknown>>();
    await until(
      async () => {
        for (const id of [...ids.values()].flat()) {
          if (views.get(id)?.state === "sent") continue;
          const view = await getFromAny<Record<string, unknown>>(survivors, `/api/send/${id}`);
          if (view) views.set(id, view);
          if (view?.state !== "sent") return false;
        }
        return true;
      },
      60_000,
      500,
    );
    for (const [i, chat] of chats.entries()) {
      const shown = (ids.get(i + 1) ?? []).map((id) => views.get(id));
      expect(shown.map((v) => v?.state)).toEqual(Array(PER_CONVERSATION).fill("sent"));
      expect(shown.map((v) => (v?.message_ids as string[] | undefined)?.join(","))).toEqual(
        telegram.botMessages(chat).map((m) => String(m.message_id)),
      );
    }
    expect(cluster.crashes).toBe(0);

    const perReplica = new Map<string, number>();
    for (const t of all) perReplica.set(t.replica, (perReplica.get(t.replica) ?? 0) + 1);
    log("send load:", {
      requests: TOTAL,
      tries: all.length,
      replays: all.filter((t) => t.replayed).length,
      unreachable: unreachable.length,
      acceptedInMs: acceptedIn,
      deliveredAfterLastAcceptMs: deliveredIn,
      killedAfterMs: killedAt - started,
      leader: leader.name,
      victim: victim.name,
    });
    log("tries per replica:", Object.fromEntries(perReplica));
  }, 240_000);
});

describe("a config schedule firing every 3 s across 3 replicas, the channel's leader SIGKILLed after 4 fires", () => {
  const SLOT_MS = 3_000;
  const CHAT = 810_001;
  const ID = "cfg:tick";
  const world = useWorld({
    replicas: REPLICAS,
    chats: [CHAT],
    sections: {
      // Short entry leases, so an entry of the dead leader would be taken over at once.
      outbox: { poll_ms: 200, lease_ms: 2_000, retry_backoff_ms: 200 },
      // A due time that passes while the channel moves (a channel lease, 5 s, and a heartbeat) still runs once after the takeover.
      schedules: {
        grace_ms: 60_000,
        jobs: { tick: { cron: "*/3 * * * * *", channel: "telegram", target: { chat: String(CHAT) }, prompt: "tick" } },
      },
    },
  });

  it("runs every due time once: no duplicates, and no gap but the due times the takeover runs as one", async () => {
    const { telegram, cluster, db } = world();
    const leader = await cluster.waitLeader("telegram", 30_000);
    const replies = () => telegram.botMessages(CHAT);
    const schedule = () => getFromAny<ScheduleView>(cluster.members, `/api/schedules/${ID}`);
    // The leader dies between two fires, once the 4th run's reply is out and its entry is sent:
    // an entry still unfinished would count as a run still going, and the first due time after
    // the takeover would be skipped (by the rule), not run.
    let view: ScheduleView | undefined;
    const between = await until(
      async () => {
        view = await schedule();
        return replies().length >= 4 && view?.fires === replies().length && view.last_delivery?.state === "sent";
      },
      60_000,
      100,
    );
    expect(between, `${JSON.stringify(view)}\n${cluster.evidence().join("\n")}`).toBe(true);
    const firesBefore = view?.fires ?? 0;
    const killedAt = Date.now();
    await leader.process.kill("SIGKILL");
    const next = await cluster.waitLeader("telegram", 30_000, leader);
    const takeoverSeenAt = Date.now();

    // Ten fires after the first one, then the operator pauses it.
    await until(
      async () => {
        view = await schedule();
        return (view?.fires ?? 0) >= 11;
      },
      90_000,
      250,
    );
    expect(view?.fires, cluster.evidence().join("\n")).toBeGreaterThanOrEqual(11);
    const paused = await call(next, "POST", `/api/schedules/${ID}/pause`);
    expect(paused.status).toBe(200);
    expect(paused.body.state).toBe("paused");
    await until(
      async () => {
        view = await schedule();
        return view?.last_delivery?.state === "sent" && replies().length >= view.fires;
      },
      30_000,
      250,
    );
    await settleCount(() => replies().length, 0, 1_000);
    view = await schedule();
    if (!view) throw new Error("no replica showed the schedule");

    const rows = await outboxRows(db, view.tenant, `schedule:${ID}`);
    const dues = rows.map((r) => Number(r.key.split(":").at(-1)));
    // Every due time from the first fire to the last; one without a fire is a gap.
    const first = dues[0] as number;
    const last = dues.at(-1) as number;
    const gaps: number[] = [];
    for (let slot = first; slot <= last; slot += SLOT_MS) if (!dues.includes(slot)) gaps.push(slot);
    const sinceKill = (at: number) => at - killedAt;
    const posts = telegram.calls.filter((c) => c.method === "sendMessage" && String(c.params.chat_id) === String(CHAT));
    const resumedAt = posts.find((c) => c.at > killedAt)?.at ?? Number.POSITIVE_INFINITY;
    log("schedule:", {
      fires: view.fires,
      firesBeforeKill: firesBefore,
      missed: view.missed,
      skipped: view.skipped,
      takeoverSeenMs: sinceKill(takeoverSeenAt),
      firstPostAfterKillMs: sinceKill(resumedAt),
      dueMsSinceKill: dues.map(sinceKill),
      gapMsSinceKill: gaps.map(sinceKill),
      replyMsSinceKill: replies().map((m) => sinceKill(m.versions[0]?.at ?? m.date)),
      leader: leader.name,
      next: next.name,
    });

    // One run per fire, each reply once; none missed.
    expect(view).toMatchObject({ state: "paused", missed: 0 });
    expect(replies().map((m) => m.text)).toEqual(Array(view.fires).fill("ok: tick"));
    // Each fire is one outbox entry, keyed by its due time; every one ran to the end.
    expect(rows.map((r) => r.state)).toEqual(Array(view.fires).fill("sent"));
    expect(new Set(dues).size).toBe(view.fires);
    expect(dues.every((d) => d % SLOT_MS === 0)).toBe(true);
    expect(dues).toEqual([...dues].sort((a, b) => a - b));
    // The runs before the kill were posted by the old leader, the rest by the new one.
    const posters = (after: number, before: number) => [
      ...new Set(posts.filter((c) => c.at > after && c.at < before).map((c) => c.client)),
    ];
    expect(posters(0, killedAt)).toEqual([leader.name]);
    expect(posters(killedAt, Number.POSITIVE_INFINITY)).toEqual([next.name]);
    // No gap but where no replica ran the channel: the new leader runs the first due time that
    // passed meanwhile, late (its reply is the first post after the kill), and goes on from the
    // next one to come. Should that next one come while the late run still goes, it is skipped,
    // by the rule; so one skip is allowed, within a due time of the late run, and no other.
    expect(dues.filter((d) => d > killedAt && d <= takeoverSeenAt).length).toBeGreaterThanOrEqual(1);
    expect(gaps.filter((slot) => slot <= killedAt || slot > resumedAt + SLOT_MS).map(sinceKill)).toEqual([]);
    expect(gaps.filter((slot) => slot > resumedAt).length).toBeLessThanOrEqual(view.skipped);
    expect(view.skipped).toBeLessThanOrEqual(1);
    expect(cluster.crashes).toBe(0);
  }, 180_000);
});
