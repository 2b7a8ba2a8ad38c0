/**
 * `npm run bench`: N conversations at once through the whole gateway (dispatcher, renderer,
 * store, embedded harness) on the loopback platform, against a zero-delay mock model: once on
 * SQLite and once on PostgreSQL (a database of its own on the machine's server, dropped after).
 * Prints throughput, time from a user's message to the first visible reply text (p50/p99), and
 * peak RSS, one line per storage. A benchmark, not a test: on a shared machine compare ratios
 * from one run only.
 *
 * Then the remote backend (./remote.ts): a real LangGraph API server in process, and the time
 * Antler adds to the first visible text over a bare SDK client streaming the same run there.
 * That section takes longer (the server's queue polls for runs); `--embedded-only` skips it.
 *
 *   npm run bench -- [conversations=20] [messagesPerConversation=5] [--embedded-only]
 */
import pg from "pg";
import { startTestGateway } from "../contract/gateway.js";
import { LoopbackWorld } from "../fakes/loopback.js";
import { benchRemote, percentile, until } from "./remote.js";

const args = process.argv.slice(2).filter((a) => !a.startsWith("--"));
const embeddedOnly = process.argv.includes("--embedded-only");
const conversations = Number(args[0] ?? 20);
const perConversation = Number(args[1] ?? 5);
const MIN_EDIT_INTERVAL_MS = 20;
const REPLY =
  "This is a benchmark reply of a few dozen words, streamed in small chunks so the renderer has edits to make. ".repeat(2);

interface Figures {
  storage: string;
  seconds: number;
  firstVisible: number[];
  peakRss: number;
}

/** The scenario on one storage: a fresh gateway, one untimed warm-up round, then the timed rounds. */
async function benchStorage(label: string, storage?: Record<string, unknown>): Promise<Figures> {
  const world = new LoopbackWorld({ minEditIntervalMs: MIN_EDIT_INTERVAL_MS });
  const gw = await startTestGateway({
    channels: { loop: world.channelConfig() },
    gateway: { max_concurrent_runs: conversations, queue_size: perConversation + 1 },
    ...(storage ? { storage } : {}),
  });
  gw.model.setDefault({ text: REPLY, chunkSize: 8 });

  let peakRss = process.memoryUsage().rss;
  const sampler = setInterval(() => {
    peakRss = Math.max(peakRss, process.memoryUsage().rss);
  }, 20);

  async function converse(i: number, firstVisible: number[]): Promise<void> {
    const chatId = `bench${i}`;
    for (let n = 0; n < perConversation; n++) {
      const before = world.botMessages(chatId).length;
      const sent = Date.now();
      await world.userSays(`message ${n}`, { chatId });
      const reply = await until(() => world.botMessages(chatId)[before]);
      firstVisible.push((reply.versions[0]?.at ?? Date.now()) - sent);
      await until(() => world.botMessages(chatId)[before]?.text === REPLY);
    }
  }

  // One untimed round first: module loading, JIT and database warm-up are not gateway overhead.
  await Promise.all(Array.from({ length: conversations }, (_, i) => world.userSays("warm-up", { chatId: `bench${i}` })));
  await until(() =>
    Array.from({ length: conversations }, (_, i) => world.botMessages(`bench${i}`)[0]?.text === REPLY).every(Boolean),
  );

  const firstVisible: number[] = [];
  const started = Date.now();
  await Promise.all(Array.from({ length: conversations }, (_, i) => converse(i, firstVisible)));
  const seconds = (Date.now() - started) / 1000;
  clearInterval(sampler);
  await gw.stop();
  return { storage: label, seconds, firstVisible, peakRss };
}

/**
 * A database of its own on the machine's PostgreSQL (`ANTLER_BENCH_POSTGRES`, default
 * postgres://postgres@127.0.0.1:5432/test), dropped afterwards; undefined with the reason when
 * there is none.
 */
async function benchDatabase(): Promise<{ url: string; drop: () => Promise<void> } | { skipped: string }> {
  const admin = process.env.ANTLER_BENCH_POSTGRES ?? "postgres://postgres@127.0.0.1:5432/test";
  const name = `antler_bench_${Date.now()}`;
  const client = new pg.Client({ connectionString: admin });
  try {
    await client.connect();
    await client.query(`CREATE DATABASE ${name}`);
  } catch (err) {
    await client.end().catch(() => undefined);
    return { skipped: `PostgreSQL at ${new URL(admin).host} is not usable: ${(err as Error).message}` };
  }
  await client.end();
  const url = new URL(admin);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const c = new pg.Client({ connectionString: admin });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}

const rows: Figures[] = [await benchStorage("sqlite")];
const database = await benchDatabase();
if ("url" in database) {
  try {
    rows.push(await benchStorage("postgres", { kind: "postgres", url: database.url }));
  } finally {
    await database.drop();
  }
}

const total = conversations * perConversation;
console.log(`conversations: ${conversations}, messages each: ${perConversation}, replies: ${total}`);
console.log("storage   throughput         first visible p50 / p99   peak RSS");
for (const r of rows) {
  const rate = `${(total / r.seconds).toFixed(1)} msg/s (${r.seconds.toFixed(2)} s)`;
  const first = `${percentile(r.firstVisible, 50)} / ${percentile(r.firstVisible, 99)} ms`;
  console.log(`${r.storage.padEnd(9)} ${rate.padEnd(18)} ${first.padEnd(25)} ${(r.peakRss / 1024 / 1024).toFixed(0)} MiB`);
}
if ("skipped" in database) console.log(`postgres  skipped: ${database.skipped}`);

if (!embeddedOnly) {
  await benchRemote({ conversations, perConversation, reply: REPLY, minEditIntervalMs: MIN_EDIT_INTERVAL_MS });
}
// The LangGraph server's queue workers never stop.
process.exit(0);
