/**
 * `npm run bench`: N conversations at once through the whole gateway (dispatcher, renderer,
 * SQLite store, embedded harness) on the loopback platform, against a zero-delay mock model.
 * Prints throughput, time from a user's message to the first visible reply text (p50/p99), and
 * peak RSS. A benchmark, not a test: on a shared machine compare ratios from one run only.
 *
 * Then the remote backend (./remote.ts): a real LangGraph API server in process, and the time
 * Antler adds to the first visible text over a bare SDK client streaming the same run there.
 * That section takes longer (the server's queue polls for runs); `--embedded-only` skips it.
 *
 *   npm run bench -- [conversations=20] [messagesPerConversation=5] [--embedded-only]
 */
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

const world = new LoopbackWorld({ minEditIntervalMs: MIN_EDIT_INTERVAL_MS });
const gw = await startTestGateway({
  channels: { loop: world.channelConfig() },
  gateway: { max_concurrent_runs: conversations, queue_size: perConversation + 1 },
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

// One untimed round first: module loading, JIT and SQLite warm-up are not gateway overhead.
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

const total = conversations * perConversation;
console.log(`conversations: ${conversations}, messages each: ${perConversation}, replies: ${total}`);
console.log(`throughput: ${(total / seconds).toFixed(1)} messages/s (${seconds.toFixed(2)} s)`);
console.log(`first visible text: p50 ${percentile(firstVisible, 50)} ms, p99 ${percentile(firstVisible, 99)} ms`);
console.log(`peak RSS: ${(peakRss / 1024 / 1024).toFixed(0)} MiB`);

if (!embeddedOnly) {
  await benchRemote({ conversations, perConversation, reply: REPLY, minEditIntervalMs: MIN_EDIT_INTERVAL_MS });
}
// The LangGraph server's queue workers never stop.
process.exit(0);
