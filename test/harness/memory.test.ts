/**
 * Memory per person in the embedded agent, on the mock model and the SQLite store: the facts in
 * the newest user message's context block (read once per run, the system prompt untouched), the
 * extraction after the final answer (its own model, usage `memory`, bad answers harmless), the
 * three tools (only ever the run's own person), group chats, and a user graph's store.
 */
import path from "node:path";
import { tool } from "@langchain/core/tools";
import { MemorySaver } from "@langchain/langgraph";
import { ChatOpenAI } from "@langchain/openai";
import { afterEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { AgentHarness, createAgentBackend, createAntlerAgent, createHarness } from "../../src/harness/index.js";
import { MemoryBook, namespaceOf } from "../../src/harness/memory/index.js";
import type { RunUser } from "../../src/harness/types.js";
import type { ModelUsage } from "../../src/harness/usage.js";
import { SqliteCheckpoints } from "../../src/storage/sqlite/index.js";
import {
  type ChatCompletionRequest,
  contentText,
  lastUserText,
  type MockModel,
  mockModelConfig,
  startMockModel,
} from "../fakes/openai.js";
import { collect, configFor, last, memoryLogger, tempDir } from "./helpers.js";

const EXTRACTION = "You keep a short list of lasting facts";
const isExtraction = (req: ChatCompletionRequest) => contentText(req.messages[0]?.content).includes(EXTRACTION);
const NOTHING = '{"add": [], "update": [], "remove": []}';

const ADA: RunUser = { id: "42", name: "Ada", personId: "default-tg-42", channel: "tg", chatType: "direct" };
const BOB: RunUser = { id: "43", name: "Bob", personId: "default-tg-43", channel: "tg", chatType: "direct" };
const inGroup = (user: RunUser): RunUser => ({ ...user, chatType: "group" });

let mock: MockModel | undefined;
let harness: AgentHarness | undefined;
afterEach(async () => {
  await harness?.close();
  await mock?.close();
  harness = undefined;
  mock = undefined;
  vi.restoreAllMocks();
});

interface Setup {
  memory?: Record<string, unknown>;
  features?: Record<string, unknown>;
  tools?: Parameters<typeof createHarness>[0]["tools"];
  /** The extraction's answer, by request; nothing changes by default. */
  extract?: (req: ChatCompletionRequest) => string;
}

async function start(setup: Setup = {}) {
  mock = await startMockModel();
  const model = mock;
  model.setDefault((req) =>
    isExtraction(req) ? { text: setup.extract?.(req) ?? NOTHING } : { text: `ok: ${lastUserText(req)}` },
  );
  const config = configFor(model, {
    models: [mockModelConfig(model), mockModelConfig(model, "cheap")],
    agent: {
      features: { memory: true, dynamic_context: true, ...setup.features },
      memory: { model: "cheap", ...setup.memory },
    },
  });
  const usage: ModelUsage[] = [];
  const { logger, logs } = memoryLogger();
  harness = await createHarness({ config, baseDir: tempDir(), logger, onUsage: (u) => usage.push(u), tools: setup.tools });
  const book = harness.memory as MemoryBook;
  return { mock: model, harness, book, usage, logs };
}

const chatRequests = (m: MockModel) => m.requests.filter((r) => !isExtraction(r));
const extractionRequests = (m: MockModel) => m.requests.filter(isExtraction);

describe("memory: what the model reads", () => {
  it("puts the person's facts in the newest user message's context block; the system prompt stays byte-identical", async () => {
    const { mock, harness, book } = await start();
    await collect(harness.run("t0", "hello", { user: ADA }));
    await book.apply(ADA.personId!, { add: [{ text: "Lives in Lisbon" }, { text: "Is called Ada" }] });
    const [lisbon] = await book.list(ADA.personId!);
    const done = last(await collect(harness.run("t1", "where do I live?", { user: ADA })));
    expect(done).toMatchObject({ type: "done" });
    const [first, second] = chatRequests(mock);
    const newest = lastUserText(second!);
    expect(newest).toMatch(/^<context>\nCurrent date: .*\nUser: Ada \(id 42\)\n/);
    expect(newest).toContain(`- [${lisbon!.id}] Lives in Lisbon\n- [`);
    expect(newest).toMatch(/Is called Ada\n<\/context>\n\nwhere do I live\?$/);
    expect(contentText(second!.messages[0]!.content)).toBe(contentText(first!.messages[0]!.content));
    // Only the newest user message carries it: the history keeps the words as sent.
    await collect(harness.run("t1", "and my name?", { user: ADA }));
    const third = chatRequests(mock)[2]!;
    const users = third.messages.filter((m) => m.role === "user").map((m) => contentText(m.content));
    expect(users[0]).toBe("where do I live?");
    expect(users[1]).toContain("Lives in Lisbon");
  });

  it("reads the facts once per run, however many model calls it makes", async () => {
    const ping = tool(async () => "pong", { name: "ping", description: "Ping.", schema: z.object({}) });
    const { mock, harness, book } = await start({ memory: { extraction: false }, tools: [ping] });
    await book.apply(ADA.personId!, { add: [{ text: "Likes tea" }] });
    const reads = vi.spyOn(book, "list");
    mock.enqueue({ toolCalls: [{ name: "ping", args: {} }] }, { toolCalls: [{ name: "ping", args: {} }] }, { text: "Done." });
    expect(last(await collect(harness.run("t", "ping twice", { user: ADA })))).toMatchObject({ type: "done", text: "Done." });
    expect(chatRequests(mock)).toHaveLength(3);
    for (const req of chatRequests(mock)) expect(lastUserText(req)).toContain("Likes tea");
    expect(reads).toHaveBeenCalledTimes(1);
    await collect(harness.run("t", "again", { user: ADA }));
    expect(reads).toHaveBeenCalledTimes(2);
  });

  it("gives another person none of them, and a run without a person no memory at all", async () => {
    const { mock, harness, book } = await start();
    await book.apply(ADA.personId!, { add: [{ text: "Lives in Lisbon" }] });
    await collect(harness.run("b", "where do I live?", { user: BOB }));
    await collect(harness.run("n", "where do I live?"));
    for (const req of chatRequests(mock)) expect(JSON.stringify(req.messages)).not.toContain("Lisbon");
    await harness.memory!.settled();
    // The run without a person was not read for facts.
    expect(extractionRequests(mock)).toHaveLength(1);
    expect(JSON.stringify(extractionRequests(mock)[0]!.messages)).toContain("The person: Bob");
  });
});

describe("memory: the extraction after a turn", () => {
  it("reads the person's words and the reply with its own model, applies the changes and reports usage as memory", async () => {
    const { mock, harness, book, usage } = await start({
      extract: (req) =>
        lastUserText(req).includes("I live in Lisbon")
          ? '```json\n{"add": [{"text": "Is called Ada", "category": "identity"}, {"text": "Lives in Lisbon", "category": "location"}], "update": [], "remove": []}\n```'
          : NOTHING,
    });
    mock.enqueue({ text: "Nice to meet you, Ada." });
    const done = last(await collect(harness.run("t", "my name is Ada and I live in Lisbon", { user: ADA })));
    expect(done).toMatchObject({ type: "done", text: "Nice to meet you, Ada." });
    await harness.memory!.settled();
    expect((await book.list(ADA.personId!)).map((f) => [f.text, f.category])).toEqual([
      ["Is called Ada", "identity"],
      ["Lives in Lisbon", "location"],
    ]);
    const [extraction] = extractionRequests(mock);
    expect(extraction!.model).toBe(mockModelConfig(mock, "cheap").model);
    const prompt = lastUserText(extraction!);
    expect(prompt).toContain("> my name is Ada and I live in Lisbon");
    expect(prompt).not.toContain("<context>");
    expect(prompt).toContain("The assistant's reply:\nNice to meet you, Ada.");
    expect(usage.filter((u) => u.kind === "memory")).toEqual([expect.objectContaining({ kind: "memory", model: "cheap" })]);
    expect(usage.filter((u) => u.kind === "chat")).toEqual([expect.objectContaining({ model: "mock" })]);

    // A correction updates the fact by its id; "forget that" removes one.
    const [name, city] = await book.list(ADA.personId!);
    mock.setDefault((req) =>
      isExtraction(req)
        ? { text: JSON.stringify({ update: [{ id: city!.id, text: "Lives in Porto" }], remove: [name!.id] }) }
        : { text: "Got it." },
    );
    await collect(harness.run("t", "I moved to Porto, and forget my name", { user: ADA }));
    await harness.memory!.settled();
    expect((await book.list(ADA.personId!)).map((f) => f.text)).toEqual(["Lives in Porto"]);
    expect(lastUserText(extractionRequests(mock)[1]!)).toContain(`- [${city!.id}] Lives in Lisbon`);
  });

  it("changes nothing on a bad answer (prose, broken JSON, wrong shapes, unknown ids, a failed call), and the runs go on", async () => {
    const answers = [
      "Sure! The user lives in Lisbon.",
      '{"add": [{"text": "Lives in',
      '{"add": "Lives in Lisbon", "update": {"id": "x"}, "remove": [5, null]}',
      '{"update": [{"id": "nope", "text": "Hacked"}], "remove": ["also-nope"]}',
    ];
    const { mock, harness, book, logs } = await start({ extract: () => answers.shift() ?? NOTHING });
    await book.apply(ADA.personId!, { add: [{ text: "Likes tea" }] });
    const before = await book.list(ADA.personId!);
    for (let i = 0; i < 4; i++) {
      expect(last(await collect(harness.run("t", `message ${i}`, { user: ADA })))).toMatchObject({ type: "done" });
      await harness.memory!.settled();
    }
    // The model endpoint fails outright: the reply is already out, the extraction is dropped.
    mock.enqueue({ text: "Fine." }, { fault: "http500" });
    expect(last(await collect(harness.run("t", "message 4", { user: ADA })))).toMatchObject({ type: "done", text: "Fine." });
    await harness.memory!.settled();
    expect(await book.list(ADA.personId!)).toEqual(before);
    expect(extractionRequests(mock)).toHaveLength(5);
    expect(logs.some((l) => l.msg === "memory: the extraction answered no JSON; nothing changed")).toBe(true);
    expect(logs.some((l) => l.msg === "memory: work after a turn failed")).toBe(true);
    // No log line carries what the person said.
    expect(JSON.stringify(logs)).not.toContain("Lisbon");
    expect(last(await collect(harness.run("t", "still there?", { user: ADA })))).toMatchObject({ type: "done" });
  });

  it("does not hold the reply: done comes while the extraction is still waiting on its model", async () => {
    const { mock, harness } = await start();
    mock.enqueue({ text: "Quick reply." }, { text: NOTHING, firstByteMs: 1_500 });
    const started = Date.now();
    const done = last(await collect(harness.run("t", "hi", { user: ADA })));
    expect(done).toMatchObject({ type: "done", text: "Quick reply." });
    expect(Date.now() - started).toBeLessThan(1_200);
    let settled = false;
    void harness.memory!.settled().then(() => {
      settled = true;
    });
    await new Promise((r) => setTimeout(r, 50));
    expect(settled).toBe(false);
    await harness.memory!.settled();
    expect(extractionRequests(mock)).toHaveLength(1);
  });
});

describe("memory: the tools", () => {
  it("remember, update_memory and forget act on the run's own person only", async () => {
    const { mock, harness, book } = await start({ memory: { extraction: false } });
    mock.enqueue(
      { toolCalls: [{ name: "remember", args: { fact: "Prefers answers in German", category: "preference" } }] },
      { text: "I'll remember." },
    );
    await collect(harness.run("a", "please remember I prefer German", { user: ADA }));
    const [fact] = await book.list(ADA.personId!);
    expect(fact).toMatchObject({ text: "Prefers answers in German", category: "preference" });

    // Bob's run names Ada's fact by its id: it is not his, so nothing happens.
    mock.enqueue(
      { toolCalls: [{ name: "update_memory", args: { id: fact!.id, fact: "Prefers French" } }] },
      { toolCalls: [{ name: "forget", args: { id: fact!.id } }] },
      { text: "Done." },
    );
    const bobs = await collect(harness.run("b", "change it", { user: BOB }));
    const results = bobs.flatMap((e) => (e.type === "tool_end" ? [e.output] : []));
    expect(results).toEqual([
      `There is no remembered fact with id ${fact!.id}: nothing was changed.`,
      `There is no remembered fact with id ${fact!.id}: nothing was changed.`,
    ]);
    expect(await book.list(ADA.personId!)).toEqual([fact]);

    mock.enqueue(
      { toolCalls: [{ name: "update_memory", args: { id: fact!.id, fact: "Prefers answers in French" } }] },
      { text: "Updated." },
      { toolCalls: [{ name: "forget", args: { id: fact!.id } }] },
      { text: "Forgotten." },
    );
    const updated = await collect(harness.run("a", "French now", { user: ADA }));
    expect(updated.find((e) => e.type === "tool_end")).toMatchObject({
      output: `Updated [${fact!.id}]: Prefers answers in French`,
    });
    expect((await book.list(ADA.personId!)).map((f) => f.text)).toEqual(["Prefers answers in French"]);
    const forgotten = await collect(harness.run("a", "forget it", { user: ADA }));
    expect(forgotten.find((e) => e.type === "tool_end")).toMatchObject({
      output: `Forgot [${fact!.id}]: Prefers answers in French`,
    });
    expect(await book.list(ADA.personId!)).toEqual([]);

    mock.enqueue({ toolCalls: [{ name: "remember", args: { fact: "Anything" } }] }, { text: "Hm." });
    const nobody = await collect(harness.run("n", "remember this"));
    expect(nobody.find((e) => e.type === "tool_end")).toMatchObject({
      output: "There is no person behind this run, so there is nothing to remember for.",
    });
  });

  it("keeps at most max_facts: the fact updated longest ago goes, one said again stays", async () => {
    const { book } = await start({ memory: { max_facts: 2, extraction: false } });
    let now = 1_000;
    const clocked = new MemoryBook(book.store, { maxFacts: 2, now: () => now++ });
    const p = "p-limit";
    await clocked.apply(p, { add: [{ text: "Fact one" }] });
    await clocked.apply(p, { add: [{ text: "Fact two" }] });
    await clocked.apply(p, { add: [{ text: "fact ONE." }] }); // said again: confirmed, not kept twice
    const done = await clocked.apply(p, { add: [{ text: "Fact three" }] });
    expect(done.dropped.map((f) => f.text)).toEqual(["Fact two"]);
    expect((await clocked.list(p)).map((f) => f.text)).toEqual(["Fact one", "Fact three"]);
  });
});

describe("memory in group chats", () => {
  it("groups: off (the default) reads, learns and shows nothing in a group; the tools refuse", async () => {
    const { mock, harness, book } = await start();
    await book.apply(ADA.personId!, { add: [{ text: "Lives in Lisbon" }] });
    mock.enqueue({ toolCalls: [{ name: "remember", args: { fact: "Secret" } }] }, { text: "Hm." });
    const events = await collect(harness.run("g", "remember my secret", { user: inGroup(ADA) }));
    expect(events.find((e) => e.type === "tool_end")).toMatchObject({
      output: "Memory is not used in group chats here: nothing was changed.",
    });
    await harness.memory!.settled();
    expect(extractionRequests(mock)).toHaveLength(0);
    for (const req of chatRequests(mock)) expect(JSON.stringify(req.messages)).not.toContain("Lisbon");
    expect((await book.list(ADA.personId!)).map((f) => f.text)).toEqual(["Lives in Lisbon"]);
  });

  it("groups: writer gives the model the writer's facts only, and reads only the writer's message for new ones", async () => {
    const { mock, harness, book } = await start({ memory: { groups: "writer" } });
    await book.apply(ADA.personId!, { add: [{ text: "Lives in Lisbon" }] });
    await book.apply(BOB.personId!, { add: [{ text: "Lives in Oslo" }] });
    await collect(harness.run("g", "what's the weather where I live?", { user: inGroup(BOB) }));
    const [bobs] = chatRequests(mock);
    expect(lastUserText(bobs!)).toContain("Lives in Oslo");
    expect(JSON.stringify(bobs!.messages)).not.toContain("Lisbon");
    await harness.memory!.settled();
    expect(lastUserText(extractionRequests(mock)[0]!)).toContain("The person: Bob");
  });
});

describe("the store handed to a user's graph", () => {
  it("a graph factory gets the store; its nodes reach it, and what they keep is in the configured storage", async () => {
    mock = await startMockModel();
    const dir = tempDir();
    const config = configFor(mock, {
      storage: { path: path.join(dir, "antler.db") },
      agent: { backend: "graph", graph: "./memory-graph.ts:notesGraph" },
    });
    const graph = await createAgentBackend({
      config,
      baseDir: path.join(import.meta.dirname, "fixtures"),
      logger: memoryLogger().logger,
    });
    const done = last(await collect(graph.run("t", "note this", { user: ADA })));
    expect(done).toMatchObject({ type: "done", text: "noted for default-tg-42 (1 so far)" });
    expect(last(await collect(graph.run("t2", "and this", { user: ADA })))).toMatchObject({
      text: "noted for default-tg-42 (2 so far)",
    });
    await graph.close();
    const reopened = new SqliteCheckpoints(path.join(dir, "antler.db"), "normal");
    const items = await reopened.store().search(["notes", ...namespaceOf("default-tg-42").slice(1)]);
    expect(items.map((i) => i.value.text).sort()).toEqual(["and this", "note this"]);
    await reopened.close();
  });
});

describe("memory without dynamic context, in an SDK agent", () => {
  it("without dynamic context the facts get a context block of their own; approvals may name the memory tools", async () => {
    const { mock, book } = await start({ features: { dynamic_context: false }, memory: { extraction: false } });
    await book.apply(ADA.personId!, { add: [{ text: "Likes tea" }] });
    const [fact] = await book.list(ADA.personId!);
    const sdk = createAntlerAgent({
      model: new ChatOpenAI({ model: "m", apiKey: "k", configuration: { baseURL: mock.url }, maxRetries: 0 }),
      features: { memory: true },
      memory: { book },
      approvals: { forget: { decisions: ["approve", "reject"] } },
      checkpointer: new MemorySaver(),
    });
    const agent = new AgentHarness({ agent: sdk, modelName: "m" });
    mock.enqueue({ toolCalls: [{ name: "forget", args: { id: fact!.id } }] });
    const paused = last(await collect(agent.run("t", "forget the tea", { user: ADA })));
    expect(paused).toMatchObject({ type: "clarification", approval: { requests: [{ name: "forget" }] } });
    expect(lastUserText(mock.requests.at(-1)!)).toBe(
      `<context>\nRemembered about this user from earlier conversations (ids for update_memory and forget):\n- [${fact!.id}] Likes tea\n</context>\n\nforget the tea`,
    );
    expect(await book.list(ADA.personId!)).toHaveLength(1);
    await agent.close();
  });
});
