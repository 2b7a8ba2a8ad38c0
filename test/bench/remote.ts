/**
 * The remote-backend section of `npm run bench` (./gateway.ts calls `benchRemote`): what Antler
 * adds to the time to first visible text over a bare SDK client streaming the same run on the
 * same LangGraph API server (the real one, in process: test/fakes/langgraph). Aim: ≤ 10 ms.
 *
 * - A, bare client: `client.runs.stream` with the stream modes and options the remote harness
 *   uses, from just before the call to the first `messages` part carrying AI text.
 * - B, Antler: the whole gateway on the remote backend (loopback channel, dispatcher, SQLite
 *   store, renderer), from `world.userSays` to the first version of the bot's reply.
 *
 * Both drive K = min(conversations, 8) conversations at once (the server has 8 queue workers),
 * in lockstep: each conversation sends its next message, and the next step starts once every
 * run has ended. Each side has one untimed warm-up step (A creates its threads before it; B's
 * creates the server threads), then the timed rounds alternate A, B, A, B so machine noise hits
 * both. The mock model streams the same reply to both, 8 characters a chunk, 2 ms apart.
 *
 * The server's in-memory queue polls for work (an idle worker sleeps 0–1 s before looking), so
 * absolute times are noisy by hundreds of ms: the difference is the figure. To see past that
 * noise each sample is split at two moments, the same on both sides: when the SDK sends the
 * run's POST (seen through the SDK's `overrideFetchImplementation`) and when the mock model gets
 * the request. "Message → run request" is Antler's inbound path (store, queue, thread lookup),
 * "run request → model request" is the server's queue (the noise), and "model request → first
 * text" is the streaming path (SSE parsing, run translation, rendering). The first and the last
 * added up, "without the server queue", is the steady estimate of what Antler adds.
 */
import { overrideFetchImplementation } from "@langchain/langgraph-sdk";
import { startTestGateway } from "../contract/gateway.js";
import { startLangGraphServer } from "../fakes/langgraph/server.js";
import { LoopbackWorld } from "../fakes/loopback.js";
import { lastUserText, startMockModel } from "../fakes/openai.js";

/** Queue workers of the test server (test/fakes/langgraph/server.ts): more runs at once would queue. */
const SERVER_WORKERS = 8;
/** Timed rounds per side, alternated A, B, A, B. */
const ROUNDS = 2;
/** As the remote harness streams (src/harness/remote/stream.ts). */
const STREAM_MODES: Array<"messages-tuple" | "updates" | "values"> = ["messages-tuple", "updates", "values"];

export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

export async function until<T>(check: () => T | undefined | false): Promise<T> {
  for (;;) {
    const value = check();
    if (value) return value;
    await new Promise((r) => setTimeout(r, 2));
  }
}

/** One message's times in ms: message → first visible text, and its parts (see the top comment). */
interface Sample {
  total: number;
  toRun: number;
  queue: number;
  fromModel: number;
  noQueue: number;
}

/** A `messages-tuple` part's message is AI text. */
function hasAiText(data: unknown): boolean {
  const [m] = (Array.isArray(data) ? data : []) as Array<{ type?: string; content?: unknown } | undefined>;
  if (m?.type !== "ai" && m?.type !== "AIMessageChunk") return false;
  const c = m.content;
  if (typeof c === "string") return c !== "";
  return Array.isArray(c) && c.some((p: { text?: unknown }) => typeof p?.text === "string" && p.text !== "");
}

export interface RemoteBenchOptions {
  conversations: number;
  perConversation: number;
  reply: string;
  /** The loopback channel's edit interval, as in the embedded section. */
  minEditIntervalMs: number;
}

export async function benchRemote(o: RemoteBenchOptions): Promise<void> {
  const k = Math.min(o.conversations, SERVER_WORKERS);
  const mock = await startMockModel();
  // Message text → when the model got it: every message text below is unique.
  const modelAt = new Map<string, number>();
  mock.setDefault((req) => {
    const text = lastUserText(req);
    if (!modelAt.has(text)) modelAt.set(text, Date.now());
    return { text: o.reply, chunkSize: 8, delayMs: 2 };
  });
  // Message text → when the SDK sent the POST of its run (both sides use the SDK).
  const runAt = new Map<string, number>();
  overrideFetchImplementation((input: string | URL | Request, init?: RequestInit) => {
    if (init?.method === "POST" && String(input).endsWith("/runs/stream") && typeof init.body === "string") {
      const at = Date.now();
      const body = JSON.parse(init.body) as { input?: { messages?: Array<{ content?: unknown }> } };
      const text = body.input?.messages?.[0]?.content;
      if (typeof text === "string") runAt.set(text, at);
    }
    return fetch(input, init);
  });
  const lg = await startLangGraphServer({ modelUrl: mock.url });
  const world = new LoopbackWorld({ minEditIntervalMs: o.minEditIntervalMs });
  const gw = await startTestGateway({
    channels: { loop: world.channelConfig() },
    model: mock,
    agent: { backend: "remote", remote: { url: lg.url, assistant_id: "agent", api_key: lg.apiKey } },
    gateway: { max_concurrent_runs: k, queue_size: 2 },
  });
  const dispatcher = gw.gateway.messageDispatcher;
  if (!dispatcher) throw new Error("the gateway has no dispatcher");
  const threads = await Promise.all(Array.from({ length: k }, async () => (await lg.client.threads.create()).thread_id));

  const sample = (text: string, sent: number, first: number): Sample => {
    const [run, model] = [runAt.get(text) ?? Number.NaN, modelAt.get(text) ?? Number.NaN];
    const [toRun, fromModel] = [run - sent, first - model];
    if (Number.isNaN(toRun + fromModel)) throw new Error(`no timing for message "${text}"`);
    return { total: first - sent, toRun, queue: model - run, fromModel, noQueue: toRun + fromModel };
  };

  /** A: the bare SDK client streams the run to its end; the clock stops at the first AI text. */
  async function sdkTurn(i: number, text: string): Promise<Sample> {
    const sent = Date.now();
    let first = Number.NaN;
    for await (const part of lg.client.runs.stream(threads[i] ?? "", "agent", {
      input: { messages: [{ type: "human", content: text }] },
      streamMode: STREAM_MODES,
      onDisconnect: "continue",
      streamResumable: true,
      metadata: { antler_tag: text },
    })) {
      if (Number.isNaN(first) && part.event === "messages" && hasAiText(part.data)) first = Date.now();
    }
    return sample(text, sent, first);
  }

  /** B: a user message through the gateway; the clock stops when the reply's first version shows. */
  async function gatewayTurn(i: number, text: string): Promise<Sample> {
    const chatId = `remote${i}`;
    const before = world.botMessages(chatId).length;
    const sent = Date.now();
    await world.userSays(text, { chatId });
    const reply = await until(() => world.botMessages(chatId)[before]);
    return sample(text, sent, reply.versions[0]?.at ?? Number.NaN);
  }

  const sides = {
    A: { turn: sdkTurn, settle: async () => {}, samples: [] as Sample[] },
    B: { turn: gatewayTurn, settle: () => dispatcher.idle(), samples: [] as Sample[] },
  };

  /** `steps` lockstep steps of all K conversations; the next starts when every run has ended. */
  async function play(name: "A" | "B", label: string, steps: number, timed: boolean): Promise<void> {
    const side = sides[name];
    for (let n = 0; n < steps; n++) {
      const got = await Promise.all(Array.from({ length: k }, (_, i) => side.turn(i, `${label} m${n} c${i} ${name}`)));
      await side.settle();
      if (timed) side.samples.push(...got);
    }
  }

  const started = Date.now();
  await play("A", "warm-up", 1, false);
  await play("B", "warm-up", 1, false);
  for (let r = 0; r < ROUNDS; r++) {
    await play("A", `round${r}`, o.perConversation, true);
    await play("B", `round${r}`, o.perConversation, true);
  }
  const seconds = (Date.now() - started) / 1000;
  await gw.stop(false);
  await lg.close();
  await mock.close();
  overrideFetchImplementation(fetch);

  const { A, B } = sides;
  const pair = (samples: Sample[], key: keyof Sample): [number, number] => {
    const values = samples.map((s) => s[key]);
    return [percentile(values, 50), percentile(values, 99)];
  };
  const signed = (ms: number) => `${ms >= 0 ? "+" : ""}${ms}`;
  const row = (what: string, key: keyof Sample) => {
    const [a, b] = [pair(A.samples, key), pair(B.samples, key)];
    const cells = [`${a[0]} / ${a[1]}`, `${b[0]} / ${b[1]}`, `${signed(b[0] - a[0])} / ${signed(b[1] - a[1])}`];
    return `${what.padEnd(38)}${cells.map((c) => c.padEnd(16)).join("")}`.trimEnd();
  };
  console.log("");
  console.log(
    `remote backend: ${k} conversation${k === 1 ? "" : "s"} at once (at most ${SERVER_WORKERS}, the server's workers), ` +
      `${o.perConversation} messages each, ${ROUNDS} rounds of A then B: ${A.samples.length} samples each (${seconds.toFixed(1)} s)`,
  );
  console.log(
    `${"p50 / p99 ms".padEnd(38)}${["A: bare SDK", "B: Antler", "added by Antler"].map((c) => c.padEnd(16)).join("")}`.trimEnd(),
  );
  console.log(row("first visible text", "total"));
  console.log(row("  message → run request", "toRun"));
  console.log(row("  run request → model (server queue)", "queue"));
  console.log(row("  model → first text", "fromModel"));
  console.log(row("without the server queue", "noQueue"));
  console.log("The figure is the difference B − A (aim ≤ 10 ms), not the absolute times: the server's queue polls");
  console.log("for runs every 0–1 s, hundreds of ms of noise; the row without it is the steadier estimate.");
}
