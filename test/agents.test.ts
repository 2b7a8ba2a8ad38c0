/**
 * Several agents, routes and tenants through a real gateway (issue 17's acceptance): each chat
 * reaches the agent (and mock model) its route or `/agent` pick names, across restarts; tenants
 * never see each other's questions, conversations or MCP tools; usage is counted per tenant,
 * agent and model exactly as the mock reported it. Routing precedence itself is in routing.test.ts.
 */
import { rmSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { InboundMessage } from "../src/channels/types.js";
import { SWITCH_OFF } from "../src/core/conversations.js";
import { NOTICES } from "../src/core/dispatcher.js";
import { DROPPED_NOTICES } from "../src/core/dropped-questions.js";
import type { UsageSnapshot } from "../src/ops/usage.js";
import { bootGateway, type RunningGateway, tempDir } from "./agents-helpers.js";
import { eventually } from "./contract/gateway.js";
import { LoopbackWorld, shownText } from "./fakes/loopback.js";
import { type ChatCompletionRequest, contentText, lastUserText, type MockModel, startMockModel } from "./fakes/openai.js";
import { everythingServer } from "./harness/mcp-helpers.js";

let gateways: RunningGateway[] = [];
let models: MockModel[] = [];
let dirs: string[] = [];

afterEach(async () => {
  for (const gw of gateways) await gw.stop().catch(() => undefined);
  for (const m of models) await m.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  gateways = [];
  models = [];
  dirs = [];
});

async function mocks(count: number): Promise<MockModel[]> {
  const started = await Promise.all(Array.from({ length: count }, () => startMockModel()));
  models.push(...started);
  return started;
}

function newDir(): string {
  const dir = tempDir();
  dirs.push(dir);
  return dir;
}

async function boot(options: Parameters<typeof bootGateway>[0]): Promise<RunningGateway> {
  const gw = await bootGateway(options);
  gateways.push(gw);
  return gw;
}

const texts = (world: LoopbackWorld, chatId = "dm1") => world.botMessages(chatId).map((m) => shownText(m.text));
/** Waits for the bot to post `text` (exactly) in `chatId`. */
const posted = (world: LoopbackWorld, text: string, chatId = "dm1") =>
  eventually(() => texts(world, chatId).includes(text), 8_000, `"${text}" in ${chatId}`);
/** Waits for a bot message in `chatId` starting with `prefix`, the newest one. */
const postedStarting = (world: LoopbackWorld, prefix: string, chatId = "dm1") =>
  eventually(() => texts(world, chatId).findLast((t) => t.startsWith(prefix)), 8_000, `a message "${prefix}…" in ${chatId}`);
/** Everything a request showed the model, as one string. */
const historyOf = (req: ChatCompletionRequest | undefined) => (req?.messages ?? []).map((m) => contentText(m.content)).join("\n");
const systemOf = (req: ChatCompletionRequest | undefined) => contentText(req?.messages.find((m) => m.role === "system")?.content);
const toolNames = (req: ChatCompletionRequest | undefined) => (req?.tools ?? []).map((t) => t.function.name);

/** Two agents on two models: `default` on `first`, `research` on `second`. */
function twoAgents(first: MockModel, second: MockModel) {
  return {
    models: { first, second },
    agent: { model: "first", description: "Answers anything", system_prompt: "You are the general agent." },
    agents: {
      research: { model: "second", description: "Digs through sources", system_prompt: "You are the research agent." },
    },
  };
}

describe("two agents on two models", () => {
  it("sends each chat to the agent its route names, and each reply back to that chat", async () => {
    const [first, second] = await mocks(2);
    const world = new LoopbackWorld();
    await boot({
      ...twoAgents(first!, second!),
      dir: newDir(),
      channels: { loop: world },
      routes: [{ chat: "lab", agent: "research" }],
    });
    first!.setDefault({ text: "general answer" });
    second!.setDefault({ text: "research answer" });

    await world.userSays("hello general", { chatId: "dm1" });
    await world.userSays("hello research", { chatId: "lab" });
    await posted(world, "general answer", "dm1");
    await posted(world, "research answer", "lab");

    expect(first!.requests.map(lastUserText)).toEqual(["hello general"]);
    expect(second!.requests.map(lastUserText)).toEqual(["hello research"]);
    expect(systemOf(first!.requests[0])).toContain("You are the general agent.");
    expect(systemOf(second!.requests[0])).toContain("You are the research agent.");
    expect(texts(world, "dm1")).toEqual(["general answer"]);
    expect(texts(world, "lab")).toEqual(["research answer"]);
  });
});

describe("/agent", () => {
  it("lists, switches to a new thread with the agent, shows it in /status, and the switch survives a restart", async () => {
    const [first, second] = await mocks(2);
    const world = new LoopbackWorld();
    const dir = newDir();
    const config = { ...twoAgents(first!, second!), dir, channels: { loop: world } };
    const gw = await boot(config);
    first!.setDefault((req) => ({ text: `general: ${lastUserText(req)}` }));
    second!.setDefault((req) => ({ text: `research: ${lastUserText(req)}` }));

    await world.userSays("remember the word heron");
    await posted(world, "general: remember the word heron");
    await world.userSays("/agent");
    const list = await postedStarting(world, "Agents you can talk to here:");
    expect(list).toContain("- default — Answers anything (current)");
    expect(list).toContain("- research — Digs through sources");
    expect(list).not.toContain("Digs through sources (current)");

    await world.userSays("/agent research");
    await posted(world, "Switched to research. This starts a new conversation.");
    await world.userSays("which word?");
    await posted(world, "research: which word?");
    expect(first!.requests).toHaveLength(1);
    expect(second!.requests).toHaveLength(1);
    // A new thread: the earlier conversation's history is not sent to research's model.
    expect(historyOf(second!.requests[0])).not.toContain("heron");

    await world.userSays("/status");
    const status = await postedStarting(world, "Thread: ");
    expect(status).toContain("Agent: research");
    const thread = /Thread: (\S+)/.exec(status)?.[1];
    expect(thread).toBeDefined();

    // A new process on the same storage: the pick and its thread are still there.
    await gw.stop();
    await boot(config);
    await world.userSays("still there?");
    await posted(world, "research: still there?");
    expect(first!.requests).toHaveLength(1);
    expect(second!.requests).toHaveLength(2);
    expect(historyOf(second!.requests[1])).toContain("which word?");
    await world.userSays("/status");
    await eventually(() => texts(world).filter((t) => t.startsWith("Thread: ")).length === 2);
    const after = texts(world).findLast((t) => t.startsWith("Thread: "))!;
    expect(after).toContain(`Thread: ${thread}`);
    expect(after).toContain("Agent: research");

    // The pick outlives /new too: the fresh thread is research's again.
    await world.userSays("/new");
    await posted(world, NOTICES.newThread);
    await world.userSays("fresh start");
    await posted(world, "research: fresh start");
    expect(first!.requests).toHaveLength(1);
    expect(historyOf(second!.requests[2])).not.toContain("which word?");
  });

  it("refuses an unknown agent with the choices, and a route that forbids switching changes nothing", async () => {
    const [first, second] = await mocks(2);
    const world = new LoopbackWorld();
    const gw = await boot({
      ...twoAgents(first!, second!),
      dir: newDir(),
      channels: { loop: world },
      routes: [{ chat: "locked", agent: "default", allow_switch: false }],
    });
    first!.setDefault({ text: "general answer" });
    second!.setDefault({ text: "research answer" });

    await world.userSays("/agent nope");
    await posted(world, 'There is no agent named "nope" here. You can pick: default, research.');

    await world.userSays("hello", { chatId: "locked" });
    await posted(world, "general answer", "locked");
    await world.userSays("/agent research", { chatId: "locked" });
    await posted(world, `${SWITCH_OFF} This chat talks to default.`, "locked");
    await world.userSays("/agent", { chatId: "locked" });
    const list = await postedStarting(world, "Agents you can talk to here:", "locked");
    expect(list).toContain(SWITCH_OFF);
    await world.userSays("and now?", { chatId: "locked" });
    await eventually(() => texts(world, "locked").filter((t) => t === "general answer").length === 2);

    expect(second!.requests).toHaveLength(0);
    expect(first!.requests.map(lastUserText)).toEqual(["hello", "and now?"]);
    // Same thread as before the refused switch, and no pick stored.
    expect(historyOf(first!.requests[1])).toContain("hello");
    const key = "loop:w:locked";
    expect(await gw.gateway.bindingStore!.chosenAgent(key)).toBeUndefined();
    expect((await gw.gateway.bindingStore!.threadHistory(key)).map((b) => b.agent)).toEqual(["default"]);
  });
});

describe("a route changed between restarts", () => {
  it("moves the chat to a new thread with the agent the new route names", async () => {
    const [first, second] = await mocks(2);
    const world = new LoopbackWorld();
    const dir = newDir();
    const gw = await boot({ ...twoAgents(first!, second!), dir, channels: { loop: world } });
    first!.setDefault({ text: "general answer" });
    second!.setDefault({ text: "research answer" });
    await world.userSays("remember the word heron");
    await posted(world, "general answer");
    const before = await gw.gateway.bindingStore!.currentBinding("loop:w:dm1");
    await gw.stop();

    // The operator edits routes: this chat now goes to research.
    const again = await boot({
      ...twoAgents(first!, second!),
      dir,
      channels: { loop: world },
      routes: [{ chat: "dm1", agent: "research" }],
    });
    await world.userSays("which word?");
    await posted(world, "research answer");
    expect(first!.requests).toHaveLength(1);
    expect(second!.requests.map(lastUserText)).toEqual(["which word?"]);
    expect(historyOf(second!.requests[0])).not.toContain("heron");
    const history = await again.gateway.bindingStore!.threadHistory("loop:w:dm1");
    expect(history.map((b) => [b.agent, b.current])).toEqual([
      ["research", true],
      ["default", false],
    ]);
    expect(history[1]?.threadId).toBe(before?.threadId);
  });
});

describe("a route change that drops an open question", () => {
  it("tells the user once, before the message that moved the chat runs, and takes the old buttons away", async () => {
    const [first, second] = await mocks(2);
    const world = new LoopbackWorld();
    const dir = newDir();
    const gw = await boot({ ...twoAgents(first!, second!), dir, channels: { loop: world } });
    first!.enqueue({
      toolCalls: [{ name: "ask_clarification", args: { question: "Which field?", options: ["Birds", "Fish"] } }],
    });
    await world.userSays("study something");
    const question = await eventually(() => world.botMessages().find((m) => m.buttons.length === 2), 8_000, "the question");
    await gw.stop();

    // The operator edits routes: this chat now goes to research, whose thread never asked.
    await boot({ ...twoAgents(first!, second!), dir, channels: { loop: world }, routes: [{ chat: "dm1", agent: "research" }] });
    second!.setDefault({ text: "research answer" });
    await world.userSays("Birds");
    await posted(world, "research answer");
    const shown = texts(world);
    const notice = shown.indexOf(DROPPED_NOTICES.message);
    expect(notice, "the notice").toBeGreaterThan(-1);
    expect(notice, "before the answer").toBeLessThan(shown.indexOf("research answer"));
    expect(question.buttons).toEqual([]);
    expect(second!.requests.map(lastUserText)).toEqual(["Birds"]);

    await world.userSays("and another thing");
    await eventually(() => second!.requests.length === 2 && texts(world).filter((t) => t === "research answer").length === 2);
    expect(texts(world).filter((t) => t === DROPPED_NOTICES.message)).toHaveLength(1);
    expect(first!.requests).toHaveLength(1);
  });
});

describe("an agent removed from the config", () => {
  it("/status says so, a click on its open question hears why it closed, and the next message starts a thread with the routed agent", async () => {
    const [first, second] = await mocks(2);
    const world = new LoopbackWorld();
    const dir = newDir();
    const gw = await boot({ ...twoAgents(first!, second!), dir, channels: { loop: world } });
    await world.userSays("/agent research");
    await postedStarting(world, "Switched to research");
    second!.enqueue({
      toolCalls: [{ name: "ask_clarification", args: { question: "Which field?", options: ["Birds", "Fish"] } }],
    });
    await world.userSays("study something");
    await eventually(() => world.botMessages().find((m) => m.buttons.length === 2), 8_000, "the question");
    await gw.stop();

    const { agents: _gone, ...withoutResearch } = twoAgents(first!, second!);
    await boot({ ...withoutResearch, dir, channels: { loop: world } });
    await world.userSays("/status");
    await postedStarting(world, "Thread:");
    expect(texts(world).at(-1)).toContain("Agent: research (no longer configured");
    await world.click("Birds");
    await posted(world, DROPPED_NOTICES.click);
    first!.setDefault({ text: "general here" });
    await world.userSays("hello again");
    await posted(world, "general here");
    expect(second!.requests).toHaveLength(1);
    // Told once: the click heard it, the next message does not again.
    const told = texts(world).filter((t) => t === DROPPED_NOTICES.click || t === DROPPED_NOTICES.message);
    expect(told).toEqual([DROPPED_NOTICES.click]);
    expect(world.botMessages().find((m) => m.text.startsWith("Which field?"))?.buttons).toEqual([]);
  });
});

describe("tenants", () => {
  /** Tenant a owns loopA and agent alpha (on modelA); tenant b owns loopB and beta (on modelB). */
  async function twoTenants() {
    const [modelA, modelB] = await mocks(2);
    const loopA = new LoopbackWorld();
    const loopB = new LoopbackWorld();
    const gw = await boot({
      dir: newDir(),
      models: { first: modelA!, second: modelB! },
      agents: { alpha: { model: "first" }, beta: { model: "second" } },
      tenants: {
        a: { channels: ["loopA"], agents: ["alpha"], default_agent: "alpha" },
        b: { channels: ["loopB"], agents: ["beta"], default_agent: "beta" },
      },
      channels: { loopA, loopB },
    });
    return { gw, loopA, loopB, modelA: modelA!, modelB: modelB! };
  }

  it("refuses a click on tenant b's channel that names tenant a's question; a's run stays paused and a's click still works", async () => {
    const { gw, loopA, loopB, modelA, modelB } = await twoTenants();
    modelA.enqueue({
      toolCalls: [{ name: "ask_clarification", args: { question: "Train or plane?", options: ["Train", "Plane"] } }],
    });
    await loopA.userSays("plan my trip");
    const question = await eventually(() => loopA.botMessages().find((m) => m.buttons.length === 2));
    const plane = question.buttons.find((b) => b.label === "Plane")!;
    expect(modelA.requests).toHaveLength(1);

    // A forged callback: b's channel delivers a's question id, button id, message id and even
    // a's conversation key (a real adapter would put loopB in the key; this is the worst case).
    const forged: InboundMessage = {
      channel: "loopB",
      eventId: "forged-1",
      ref: { channel: "loopB", key: "loopA:w:dm1", chatId: "dm1", chatType: "direct" },
      user: { id: "u1", name: "User One" },
      text: "",
      mentioned: true,
      action: { questionId: question.questionId!, buttonId: plane.id, messageId: question.id },
      sentAt: Date.now(),
    };
    await loopB.deliver(forged);
    await posted(loopB, NOTICES.staleQuestion);
    await gw.gateway.messageDispatcher!.idle();

    expect(modelA.requests).toHaveLength(1);
    expect(modelB.requests).toHaveLength(0);
    expect(question.buttons).toHaveLength(2);
    const storeA = gw.gateway.bindingStore!.forTenant("a");
    const binding = await storeA.currentBinding("loopA:w:dm1");
    expect(await storeA.getPending(binding!.threadId)).toMatchObject({ questionId: question.questionId });

    modelA.enqueue({ text: "Plane it is." });
    await loopA.click("Plane");
    await posted(loopA, "Plane it is.");
    expect(contentText(modelA.requests.at(-1)?.messages.find((m) => m.role === "tool")?.content)).toBe("Plane");
    expect(modelB.requests).toHaveLength(0);
  });

  it("keeps the same conversation key apart in two tenants", async () => {
    const { gw, loopA, loopB, modelA, modelB } = await twoTenants();
    modelA.setDefault({ text: "alpha answer" });
    modelB.setDefault({ text: "beta answer" });
    // Loopback keys start with the channel name ("loopA:w:dm1"), so real keys of two channels never
    // match; deliver one literal key on both channels to check the rows are kept apart by tenant.
    const key = "same:w:room";
    const say = (world: LoopbackWorld, channel: string, text: string) =>
      world.deliver({
        channel,
        eventId: `${channel}-1`,
        ref: { channel, key, chatId: "room", chatType: "direct" },
        user: { id: "u1", name: "User One" },
        text,
        mentioned: true,
        sentAt: Date.now(),
      });
    await say(loopA, "loopA", "secret of tenant a");
    await posted(loopA, "alpha answer", "room");
    await say(loopB, "loopB", "hello from tenant b");
    await posted(loopB, "beta answer", "room");

    expect(historyOf(modelB.requests[0])).not.toContain("secret of tenant a");
    expect(modelA.requests.map(lastUserText)).toEqual(["secret of tenant a"]);
    const store = gw.gateway.bindingStore!;
    const a = await store.forTenant("a").threadHistory(key);
    const b = await store.forTenant("b").threadHistory(key);
    expect(a.map((x) => x.agent)).toEqual(["alpha"]);
    expect(b.map((x) => x.agent)).toEqual(["beta"]);
    expect(a[0]?.threadId).not.toBe(b[0]?.threadId);
    expect(await store.threadHistory(key)).toEqual([]);
    expect(await store.forTenant("a").getInbound("loopB", "loopB-1")).toBeUndefined();
  });

  it("offers /agent only the agents of the chat's tenant", async () => {
    const { loopB, modelA, modelB } = await twoTenants();
    await loopB.userSays("/agent");
    const list = await postedStarting(loopB, "Agents you can talk to here:");
    expect(list).toContain("- beta (current)");
    expect(list).toContain("- default");
    expect(list).not.toContain("alpha");
    await loopB.userSays("/agent alpha");
    await posted(loopB, 'There is no agent named "alpha" here. You can pick: default, beta.');
    expect([modelA.requests.length, modelB.requests.length]).toEqual([0, 0]);
  });

  it("gives each tenant's agent only its own tenant's MCP tools, through one client per tenant", async () => {
    const [model] = await mocks(1);
    const loopA = new LoopbackWorld();
    const loopB = new LoopbackWorld();
    // Both servers are server-everything; their prefixes tell their tools apart.
    const gw = await boot({
      dir: newDir(),
      models: { first: model! },
      mcp_servers: {
        a_tools: everythingServer({ tool_prefix: "alpha" }),
        b_tools: everythingServer({ tool_prefix: "beta" }),
      },
      tenants: {
        a: { channels: ["loopA"], mcp_servers: ["a_tools"] },
        b: { channels: ["loopB"], mcp_servers: ["b_tools"] },
      },
      channels: { loopA, loopB },
    });
    model!.setDefault({ text: "ok" });
    await loopA.userSays("from tenant a");
    await loopB.userSays("from tenant b");
    await posted(loopA, "ok");
    await posted(loopB, "ok");

    const fromA = toolNames(model!.requests.find((r) => lastUserText(r) === "from tenant a"));
    const fromB = toolNames(model!.requests.find((r) => lastUserText(r) === "from tenant b"));
    expect(fromA).toContain("alpha__echo");
    expect(fromA.filter((n) => n.startsWith("beta__"))).toEqual([]);
    expect(fromB).toContain("beta__echo");
    expect(fromB.filter((n) => n.startsWith("alpha__"))).toEqual([]);

    const agents = gw.gateway.agentDirectory!;
    const reports = agents.mcpReports().map((r) => [r.tenant, r.name, r.state]);
    expect(reports.sort()).toEqual([
      ["a", "a_tools", "ready"],
      ["b", "b_tools", "ready"],
    ]);
    expect(agents.mcpOf("a")).not.toBe(agents.mcpOf("b"));
  });
});

describe("usage", () => {
  const usage = (prompt: number, completion: number) => ({
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
  });

  it("counts per tenant, agent and model exactly what the mock models reported", async () => {
    const [first, second] = await mocks(2);
    const loopA = new LoopbackWorld();
    const loopB = new LoopbackWorld();
    const gw = await boot({
      ...twoAgents(first!, second!),
      dir: newDir(),
      tools: [{ name: "echo", use: `${path.join(import.meta.dirname, "harness/fixtures/tools.mjs")}:echoTool` }],
      routes: [{ channel: "loopB", agent: "research" }],
      tenants: { a: { channels: ["loopA"] }, b: { channels: ["loopB"] } },
      channels: { loopA, loopB },
    });

    // Tenant a, default agent: a tool call and the reply after it, two model calls.
    first!.enqueue(
      { toolCalls: [{ name: "echo", args: { text: "hi" } }], usage: usage(11, 3) },
      { text: "echoed", usage: usage(20, 5) },
    );
    await loopA.userSays("echo hi");
    await posted(loopA, "echoed");
    // Tenant a, research (picked with /agent in another chat).
    second!.enqueue({ text: "found it", usage: usage(40, 2) });
    await loopA.userSays("/agent research", { chatId: "dm2" });
    await posted(loopA, "Switched to research. This starts a new conversation.", "dm2");
    await loopA.userSays("search", { chatId: "dm2" });
    await posted(loopA, "found it", "dm2");
    // Tenant b, research by its route.
    second!.enqueue({ text: "b's answer", usage: usage(100, 7) });
    await loopB.userSays("question from b");
    await posted(loopB, "b's answer");
    expect([first!.requests.length, second!.requests.length]).toEqual([2, 2]);

    const get = async (query = "") => {
      const res = await fetch(`${gw.url}/api/usage${query}`);
      expect(res.status).toBe(200);
      return (await res.json()) as UsageSnapshot;
    };
    const row = (tenant: string, agent: string, model: string, calls: number, input: number, output: number) => ({
      tenant,
      agent,
      model,
      kind: "chat",
      calls,
      input_tokens: input,
      output_tokens: output,
      total_tokens: input + output,
    });
    const all = await get();
    expect(all.rows).toEqual([
      row("a", "default", "first", 2, 31, 8),
      row("a", "research", "second", 1, 40, 2),
      row("b", "research", "second", 1, 100, 7),
    ]);
    expect(all.totals).toEqual({ calls: 4, input_tokens: 171, output_tokens: 17, total_tokens: 188 });
    const onlyA = await get("?tenant=a");
    expect(onlyA.rows.map((r) => r.tenant)).toEqual(["a", "a"]);
    expect(onlyA.totals).toEqual({ calls: 3, input_tokens: 71, output_tokens: 10, total_tokens: 81 });

    const scrape = await (await fetch(`${gw.url}/metrics`)).text();
    const a = 'tenant="a",agent="default",model="first",kind="chat"';
    expect(scrape).toContain(`antler_model_tokens_total{${a},type="input"} 31`);
    expect(scrape).toContain(`antler_model_tokens_total{${a},type="output"} 8`);
    expect(scrape).toContain(`antler_model_calls_total{${a}} 2`);
    const b = 'tenant="b",agent="research",model="second",kind="chat"';
    expect(scrape).toContain(`antler_model_tokens_total{${b},type="input"} 100`);
    expect(scrape).toContain(`antler_model_tokens_total{${b},type="output"} 7`);
  });
});
