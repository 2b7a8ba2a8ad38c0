/**
 * `npm run bench:peers`: Antler side by side with a minimal hand-written bot (./bot.mjs), on the
 * same Telegram fake (real long polling) and the same mock model, each contender in its own
 * child process (./contenders.ts). A benchmark, not a test: on a shared machine only the ratios
 * within one run mean anything.
 *
 * Both start, get one untimed warm-up reply, then run each scenario in turn (bot, then Antler):
 * N users each send one DM at the same moment, and the mock streams every reply as T chunks
 * ("tokens") D ms apart. Per contender and scenario it prints:
 * - first text p50/p99: from the user's message to the first version of a bot message showing a
 *   start of the reply. The mock sends its first chunk the moment a request arrives, so this is
 *   all contender overhead (inbound, queueing, model client, first send).
 * - msg→model p50: from the user's message to the model request (the inbound part of the above).
 * - final p50: from the user's message to the exact full reply text.
 * - calls/reply: Bot API calls the contender made in the scenario (all methods but getUpdates;
 *   per method below the table), divided by replies.
 * - CPU ms/reply: user+system CPU of the contender's process tree (/proc, ./proc.ts) from just
 *   before the messages to when the fake saw no call for 500 ms, divided by replies.
 * - peak RSS: the process tree's summed VmRSS, sampled every 50 ms during the scenario.
 * The "Antler ÷ bot" row divides each figure. Before the tables: time from spawn to ready
 * (Antler: /readyz 200; bot: first getUpdates) and RSS when idle after the warm-up.
 *
 * Scenario 4, the long conversation (one DM, 200 turns one after another; ./long.ts), runs only
 * when asked for: it takes about seven minutes, the other three about one together.
 *
 *   npm run bench:peers -- [--quick] [--only=2,3] [--long] [--turns=N] [--cpu-prof]
 *
 * --quick runs 1×30, 20×20 and 50×10 instead of 1×100, 100×50 and 300×20, and 50 turns in the
 * long conversation. --only picks scenarios by number (4 is the long one); --long alone is
 * --only=4. --turns=N (or --turns N) sets the long conversation's turns. --cpu-prof runs each
 * contender under `node --cpu-prof` (which slows it) and prints the top self-time packages and
 * functions of its whole life (./profile.ts).
 */
import { readdirSync, readFileSync, rmSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import path from "node:path";
import type { FakeUser } from "../../fakes/telegram/index.js";
import { type Contender, EDIT_INTERVAL_MS, sleep, startContender } from "./contenders.js";
import { LONG_TURNS, runLong } from "./long.js";
import { sampleRss, treeCpuMs, treeRssBytes } from "./proc.js";
import { summarize } from "./profile.js";

interface Scenario {
  label: string;
  conversations: number;
  tokens: number;
  delayMs: number;
}

const quick = process.argv.includes("--quick");
const cpuProf = process.argv.includes("--cpu-prof");
const LONG = 4;
const only =
  process.argv
    .find((a) => a.startsWith("--only="))
    ?.slice("--only=".length)
    .split(",")
    .map(Number) ?? (process.argv.includes("--long") ? [LONG] : undefined);
const long = only?.includes(LONG) ?? false;
const turnsAt = process.argv.indexOf("--turns");
const turnsArg =
  process.argv.find((a) => a.startsWith("--turns="))?.slice("--turns=".length) ??
  (turnsAt >= 0 ? String(process.argv[turnsAt + 1]) : undefined);
const turns = turnsArg !== undefined ? Number(turnsArg) : quick ? 50 : LONG_TURNS;
if (!Number.isInteger(turns) || turns < 1) throw new Error(`--turns wants a whole number of turns, not ${turnsArg}`);
const SCENARIOS = (
  quick
    ? [
        { label: "1 chat", conversations: 1, tokens: 30, delayMs: 10 },
        { label: "20 chats", conversations: 20, tokens: 20, delayMs: 20 },
        { label: "50-chat burst", conversations: 50, tokens: 10, delayMs: 0 },
      ]
    : [
        { label: "1 chat", conversations: 1, tokens: 100, delayMs: 10 },
        { label: "100 chats", conversations: 100, tokens: 50, delayMs: 20 },
        { label: "300-chat burst", conversations: 300, tokens: 20, delayMs: 0 },
      ]
)
  .map((s, i) => ({ ...s, number: i + 1 }))
  .filter((s) => !only || only.includes(s.number));
const TIMEOUT_MS = quick ? 60_000 : 180_000;
/** Each token is one 6-character word ("w0042 "), so the text has exactly `tokens` chunks. */
const CHUNK = 6;

function replyText(tokens: number): string {
  return Array.from({ length: tokens }, (_, i) => `w${String(i).padStart(4, "0")}`).join(" ");
}

function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] as number;
}

interface Figures {
  firstP50: number;
  firstP99: number;
  toModelP50: number;
  finalP50: number;
  callsPerReply: number;
  cpuPerReply: number;
  peakRssMb: number;
  /** Calls per reply by Bot API method. */
  methods: Record<string, number>;
  /** Replies that showed no start of the reply, or not the full text, before the timeout. */
  missing: number;
}

/** Sends the scenario's messages at once, waits for every exact reply, and measures. */
async function run(c: Contender, s: Scenario, index: number): Promise<Figures> {
  const reply = replyText(s.tokens);
  c.reply = { text: reply, chunkSize: CHUNK, delayMs: s.delayMs };
  const users: FakeUser[] = Array.from({ length: s.conversations }, (_, i) => ({
    id: (index + 1) * 100_000 + i,
    first_name: `User ${i}`,
  }));
  const callsBefore = c.fake.calls.length;
  const cpuBefore = treeCpuMs(c.pid);
  const rss = sampleRss(c.pid);
  const sentAt = new Map<number, number>();
  for (const user of users) {
    sentAt.set(user.id, Date.now());
    c.fake.dm(user, `scenario ${index + 1} from ${user.id}`);
  }
  const done = (u: FakeUser) => c.fake.botMessages(u.id).some((m) => m.text === reply);
  const deadline = Date.now() + TIMEOUT_MS;
  while (!users.every(done) && Date.now() < deadline && c.alive()) await sleep(50);
  if (!c.alive()) throw new Error(`${c.name} exited during "${s.label}"; see ${c.dir}`);
  // Quiet: no Bot API call but polling for 500 ms (at most 5 s), so trailing work is counted too.
  const quietBy = Date.now() + 5_000;
  for (;;) {
    const last = c.fake.calls.findLast((call) => call.method !== "getUpdates")?.at ?? 0;
    if (Date.now() - last >= 500 || Date.now() > quietBy) break;
    await sleep(50);
  }
  const cpu = treeCpuMs(c.pid) - cpuBefore;
  const peakRss = rss.stop();

  const first: number[] = [];
  const final: number[] = [];
  const toModel: number[] = [];
  for (const user of users) {
    const sent = sentAt.get(user.id) as number;
    const versions = c.fake.botMessages(user.id).flatMap((m) => m.versions);
    const shown = versions.filter((v) => v.text !== "" && reply.startsWith(v.text.trim())).map((v) => v.at);
    const full = versions.filter((v) => v.text === reply).map((v) => v.at);
    if (shown.length > 0) first.push(Math.min(...shown) - sent);
    if (full.length > 0) final.push(Math.min(...full) - sent);
    const modelAt = c.modelAt.get(`scenario ${index + 1} from ${user.id}`);
    if (modelAt !== undefined) toModel.push(modelAt - sent);
  }
  const methods: Record<string, number> = {};
  const calls = c.fake.calls.slice(callsBefore).filter((call) => call.method !== "getUpdates");
  for (const call of calls) methods[call.method] = (methods[call.method] ?? 0) + 1;
  for (const m of Object.keys(methods)) methods[m] = (methods[m] as number) / users.length;
  return {
    firstP50: percentile(first, 50),
    firstP99: percentile(first, 99),
    toModelP50: percentile(toModel, 50),
    finalP50: percentile(final, 50),
    callsPerReply: calls.length / users.length,
    cpuPerReply: cpu / users.length,
    peakRssMb: peakRss / 2 ** 20,
    methods,
    missing: users.length - Math.min(first.length, final.length),
  };
}

const num = (v: number, digits = 0) => (Number.isFinite(v) ? v.toFixed(digits) : "-");
const ratio = (a: number, b: number) => (Number.isFinite(a / b) && b > 0 ? `${(a / b).toFixed(2)}×` : "-");
const calls = (v: number) => num(v, Number.isInteger(v) ? 0 : 2);

function row(cells: string[]): string {
  return `| ${cells.join(" | ")} |`;
}

function rows(s: Scenario, bot: Figures, antler: Figures): string[] {
  const scenario = `${s.label}, ${s.tokens} tokens @ ${s.delayMs} ms`;
  const line = (name: string, f: Figures) =>
    row([
      name === "bot" ? scenario : "",
      name + (f.missing > 0 ? ` (${f.missing} unfinished)` : ""),
      `${num(f.firstP50)}/${num(f.firstP99)}`,
      num(f.toModelP50),
      num(f.finalP50),
      calls(f.callsPerReply),
      num(f.cpuPerReply, 1),
      num(f.peakRssMb),
    ]);
  return [
    line("bot", bot),
    line("Antler", antler),
    row([
      "",
      "Antler ÷ bot",
      `${ratio(antler.firstP50, bot.firstP50)}/${ratio(antler.firstP99, bot.firstP99)}`,
      ratio(antler.toModelP50, bot.toModelP50),
      ratio(antler.finalP50, bot.finalP50),
      ratio(antler.callsPerReply, bot.callsPerReply),
      ratio(antler.cpuPerReply, bot.cpuPerReply),
      ratio(antler.peakRssMb, bot.peakRssMb),
    ]),
  ];
}

const methodList = (f: Figures) =>
  Object.entries(f.methods)
    .map(([m, n]) => `${m} ${calls(n)}`)
    .join(", ");

// One untimed reply each first: module loading, JIT and SQLite warm-up are not per-reply cost.
async function warmUp(c: Contender): Promise<number> {
  const text = replyText(10);
  c.reply = { text, chunkSize: CHUNK, delayMs: 0 };
  const user = { id: 1, first_name: "Warm-up" };
  c.fake.dm(user, "warm-up");
  const deadline = Date.now() + 30_000;
  while (!c.fake.botMessages(user.id).some((m) => m.text === text)) {
    if (Date.now() > deadline) throw new Error(`${c.name}: no warm-up reply within 30 s (see ${c.dir})`);
    await sleep(20);
  }
  await sleep(2 * EDIT_INTERVAL_MS);
  return treeRssBytes(c.pid) / 2 ** 20;
}

const contenders: Contender[] = [];
let failed = false;
try {
  // One at a time, so neither start-up competes with the other for the CPU.
  const bot = await startContender("bot", { cpuProf });
  contenders.push(bot);
  const antler = await startContender("Antler", { cpuProf });
  contenders.push(antler);
  const idle = { bot: await warmUp(bot), Antler: await warmUp(antler) };

  const flags = `${quick ? " --quick" : ""}${long ? ` --turns=${turns}` : ""}${cpuProf ? " --cpu-prof" : ""}`;
  console.log(`bench:peers${flags}: edit interval ${EDIT_INTERVAL_MS} ms`);
  const load = loadavg()[0]?.toFixed(1);
  console.log(`node ${process.version}, ${cpus().length} CPUs, load ${load}; only ratios within one run mean anything\n`);
  console.log(row(["contender", "ready ms", "first poll ms", "idle RSS MB"]));
  console.log(row(["---", "---", "---", "---"]));
  console.log(row(["bot (ready = first poll)", String(bot.readyMs), String(bot.firstPollMs), num(idle.bot)]));
  console.log(row(["Antler (ready = /readyz 200)", String(antler.readyMs), String(antler.firstPollMs), num(idle.Antler)]));
  console.log("");

  const table = [
    row([
      "scenario",
      "contender",
      "first text p50/p99 ms",
      "msg→model p50 ms",
      "final p50 ms",
      "calls/reply",
      "CPU ms/reply",
      "peak RSS MB",
    ]),
    row(Array(8).fill("---")),
  ];
  const byMethod: string[] = [];
  for (const s of SCENARIOS) {
    const index = s.number - 1;
    const b = await run(bot, s, index);
    await sleep(1_000);
    const a = await run(antler, s, index);
    await sleep(1_000);
    table.push(...rows(s, b, a));
    byMethod.push(`${s.label}: bot ${methodList(b)}; Antler ${methodList(a)}`);
    if (a.missing + b.missing > 0) failed = true;
    process.stderr.write(`scenario ${index + 1} done\n`);
  }
  if (SCENARIOS.length > 0) {
    console.log(table.join("\n"));
    console.log("\ncalls per reply by method:");
    for (const line of byMethod) console.log(`  ${line}`);
  }
  if (long) {
    if (SCENARIOS.length > 0) console.log("");
    console.log((await runLong(bot, antler, turns)).join("\n"));
  }
} catch (err) {
  failed = true;
  console.error(err instanceof Error ? err.message : err);
} finally {
  for (const c of contenders) await c.stop();
  for (const c of contenders) {
    const prof = path.join(c.dir, "prof");
    for (const file of cpuProf ? readdirSync(prof).filter((f) => f.endsWith(".cpuprofile")) : []) {
      console.log(`\n${c.name} CPU profile (${path.join(prof, file)}):\n${summarize(path.join(prof, file))}`);
    }
    const output = readFileSync(path.join(c.dir, "output.log"), "utf8").trim().split("\n").filter(Boolean);
    if (output.length > 0) console.error(`${c.name} printed ${output.length} lines, the first: ${output[0]?.slice(0, 300)}`);
    // Keep the logs (and profiles) of a failed or profiled run.
    if (failed || cpuProf) console.error(`${c.name}'s files: ${c.dir}`);
    else rmSync(c.dir, { recursive: true, force: true });
  }
}
process.exit(failed ? 1 : 0);
