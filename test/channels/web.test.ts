/**
 * The web chat beyond the channel contract, at the HTTP level with a Node client that speaks the
 * page's wire (test/fakes/web): who gets in, what the routes refuse, browsers and tabs kept
 * apart, replay after a dropped stream, history after a restart, `/new`, long replies and their
 * HTML, and files the agent sends.
 */
import { writeFileSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { networkInterfaces } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { lastToolResult } from "../../src/testing/contract/shared.js";
import { contentText } from "../../src/testing/mock-model.js";
import { recordingTools } from "../../src/testing/tools.js";
import { eventually, sleep, startTestGateway, type TestGateway, type TestGatewayOptions } from "../contract/gateway.js";
import { CLIENT_COOKIE, newConversationId, WebBrowser } from "../fakes/web/client.js";
import type { ChatTab, OpenOptions } from "../fakes/web/tab.js";

const TOKEN = "web-chat-token-4f1c2a9e";

/** The first IPv4 address of this machine that is not loopback, if any. */
const EXTERNAL = Object.values(networkInterfaces())
  .flat()
  .find((a) => a?.family === "IPv4" && !a.internal)?.address;
const NO_EXTERNAL = "this machine has no non-loopback IPv4 interface to connect from";

let gw: TestGateway | undefined;
let booted: TestGatewayOptions | undefined;
const tabs: ChatTab[] = [];

afterEach(async () => {
  for (const tab of tabs.splice(0)) await tab.close();
  await gw?.stop();
  gw = undefined;
});

async function boot(web: Record<string, unknown> = {}, options: Partial<TestGatewayOptions> = {}): Promise<TestGateway> {
  booted = { channels: { web: { enabled: true, edit_interval_ms: 50, ...web } }, ...options };
  gw = await startTestGateway(booted);
  return gw;
}

/** Stops the gateway and starts it again on the same folder, port and model (a process restart). */
async function restart(web?: Record<string, unknown>): Promise<TestGateway> {
  const old = gw as TestGateway;
  await old.stop(false);
  const channels = web ? { web: { ...booted?.channels.web, ...web } } : (booted as TestGatewayOptions).channels;
  gw = await startTestGateway({ ...booted, channels, dir: old.dir, port: old.port, model: old.model });
  return gw;
}

const pageOf = (g: TestGateway, host = "127.0.0.1") => `http://${host}:${g.port}/chat`;

async function open(browser: WebBrowser, conv: string, options: OpenOptions = {}): Promise<ChatTab> {
  const tab = browser.tab(conv);
  tabs.push(tab);
  return tab.open(options);
}

/** The bot message whose Markdown is exactly `text`. */
const reply = (tab: ChatTab, text: string) => () => tab.messages.find((m) => m.markdown === text);

async function body(response: Response): Promise<Record<string, unknown>> {
  return (await response.json()) as Record<string, unknown>;
}

const conversationsRoute = (conv: string, tail: string) => `/api/conversations/${conv}/${tail}`;

describe("who gets in", () => {
  it("without a token, refuses a client elsewhere with 403 naming channels.web.token; loopback gets in", async ({ skip }) => {
    if (!EXTERNAL) return skip(NO_EXTERNAL);
    const g = await boot({}, { server: { host: "0.0.0.0" } });
    const remote = new WebBrowser(pageOf(g, EXTERNAL));
    const refused = await remote.session();
    expect(refused.status).toBe(403);
    const why = await body(refused);
    expect(why.error).toContain("channels.web.token");
    expect(why.login).toBe(false);
    expect(remote.jar.get(CLIENT_COOKIE), "no client id for a refused browser").toBeUndefined();
    const conv = newConversationId();
    expect((await remote.request("GET", conversationsRoute(conv, "history"))).status).toBe(403);
    expect((await remote.request("GET", conversationsRoute(conv, "events"))).status).toBe(403);
    expect((await remote.say(conv, "let me in")).status).toBe(403);
    expect((await remote.login("anything")).status).toBe(403);
    const page = await remote.request("GET", "/chat");
    expect(page.status).toBe(403);
    expect(await page.text()).toContain("channels.web.token");
    expect(g.model.requests).toHaveLength(0);

    const local = new WebBrowser(pageOf(g));
    const session = await local.session();
    expect(session.status).toBe(200);
    expect((await body(session)).user).toEqual({ id: expect.any(String) });
    const cookie = local.jar.get(CLIENT_COOKIE);
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: "Strict", path: "/chat" });
    const tab = await open(local, conv);
    expect((await tab.say("hello from here")).status).toBe(202);
    await eventually(reply(tab, "ok: hello from here"), 15_000, "the reply on loopback");
  });

  it("with a token, a client elsewhere signs in with it", async ({ skip }) => {
    if (!EXTERNAL) return skip(NO_EXTERNAL);
    const g = await boot({ token: TOKEN }, { server: { host: "0.0.0.0" } });
    const remote = new WebBrowser(pageOf(g, EXTERNAL));
    const before = await remote.session();
    expect(before.status).toBe(401);
    expect((await body(before)).login).toBe(true);
    expect((await remote.login(TOKEN)).status).toBe(204);
    expect((await remote.session()).status).toBe(200);
  });

  it("with channels.web.token: no session is 401 (loopback too), a wrong token 401, the right one a cookie that works", async () => {
    const g = await boot({ token: TOKEN });
    const b = new WebBrowser(pageOf(g));
    const conv = newConversationId();
    for (const response of [
      await b.session(),
      await b.request("GET", conversationsRoute(conv, "history")),
      await b.request("GET", conversationsRoute(conv, "events")),
      await b.say(conv, "hello?"),
    ]) {
      expect(response.status, response.url).toBe(401);
      expect(await body(response)).toMatchObject({ login: true, error: expect.any(String) });
    }
    expect((await b.login("not-the-token")).status).toBe(401);
    expect(b.jar.all().filter((c) => c.name !== CLIENT_COOKIE)).toEqual([]);

    expect((await b.login(TOKEN)).status).toBe(204);
    const session = b.jar.all().find((c) => c.name !== CLIENT_COOKIE);
    expect(session, "the session cookie").toBeDefined();
    expect(session).toMatchObject({ httpOnly: true, sameSite: "Strict" });
    for (const form of [
      TOKEN,
      encodeURIComponent(TOKEN),
      Buffer.from(TOKEN).toString("base64"),
      Buffer.from(TOKEN).toString("hex"),
    ]) {
      expect(session?.raw).not.toContain(form);
    }
    expect((await b.session()).status).toBe(200);
    const tab = await open(b, conv);
    expect((await tab.say("signed in")).status).toBe(202);
    await eventually(reply(tab, "ok: signed in"), 15_000, "the reply after signing in");
    expect(g.model.requests).toHaveLength(1);

    const api = new WebBrowser(pageOf(g), { bearer: TOKEN });
    expect((await api.session()).status).toBe(200);
    expect((await api.request("GET", conversationsRoute(conv, "history"))).status).toBe(200);
    expect((await new WebBrowser(pageOf(g), { bearer: "wrong" }).session()).status).toBe(401);
  });

  it("a restart keeps people signed in; a new token signs everyone out", async () => {
    const g = await boot({ token: TOKEN });
    const b = new WebBrowser(pageOf(g));
    expect((await b.login(TOKEN)).status).toBe(204);
    await restart();
    expect((await b.session()).status).toBe(200);
    await restart({ token: `${TOKEN}-rotated` });
    const after = await b.session();
    expect(after.status).toBe(401);
    expect((await body(after)).login).toBe(true);
  });

  it("server.admin_token alone opens the web chat to whoever presents it", async () => {
    const admin = "admin-token-7d3b";
    const g = await boot({}, { server: { admin_token: admin } });
    const b = new WebBrowser(pageOf(g));
    expect((await b.session()).status).toBe(401);
    expect((await b.login("nope")).status).toBe(401);
    expect((await b.login(admin)).status).toBe(204);
    expect((await b.session()).status).toBe(200);
    expect((await new WebBrowser(pageOf(g), { bearer: admin }).session()).status).toBe(200);
  });

  it("serves the page with a Content-Security-Policy that allows only its own script and style", async () => {
    const g = await boot();
    const page = await new WebBrowser(pageOf(g)).request("GET", "/chat");
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toMatch(/^text\/html/);
    const csp = page.headers.get("content-security-policy") ?? "";
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("style-src 'self'");
    expect(csp).not.toContain("unsafe-inline");
  });
});

describe("what the routes refuse", () => {
  it("415 without JSON, 413 over 16,000 characters, 400 for a bad conversation id, a missing field or bad JSON", async () => {
    const g = await boot();
    const b = new WebBrowser(pageOf(g));
    await b.ensureSession();
    const conv = newConversationId();
    const messages = conversationsRoute(conv, "messages");
    const json = JSON.stringify({ id: "m1", text: "hi" });
    expect((await b.request("POST", messages, { body: json, contentType: "text/plain" })).status).toBe(415);
    expect((await b.request("POST", messages, { body: json })).status).toBe(415);
    expect((await b.request("POST", "/api/session", { body: '{"token":"x"}', contentType: "text/plain" })).status).toBe(415);

    expect((await b.say(conv, "x".repeat(16_001))).status).toBe(413);
    await sleep(200);
    expect(g.model.requests, "a refused message starts no run").toHaveLength(0);

    for (const bad of ["short", "has.dots.inside", "x".repeat(65)]) {
      expect((await b.request("GET", conversationsRoute(bad, "history"))).status, bad).toBe(400);
      expect((await b.request("GET", conversationsRoute(bad, "events"))).status, bad).toBe(400);
      expect((await b.say(bad, "hello")).status, bad).toBe(400);
    }
    const post = (route: string, value: unknown) => b.request("POST", route, { json: value });
    expect((await post(messages, { text: "no id" })).status).toBe(400);
    expect((await post(messages, { id: "m2" })).status).toBe(400);
    expect((await post(messages, { id: "not an id!", text: "hi" })).status).toBe(400);
    expect((await post(messages, ["id", "text"])).status).toBe(400);
    expect((await post(conversationsRoute(conv, "actions"), { id: "a1" })).status).toBe(400);
    expect((await b.request("POST", messages, { body: "{", contentType: "application/json" })).status).toBe(400);
    expect(g.model.requests).toHaveLength(0);

    const tab = await open(b, conv);
    const longest = "y".repeat(16_000);
    expect((await tab.say(longest)).status, "exactly 16,000 characters are taken").toBe(202);
    await eventually(reply(tab, `ok: ${longest}`), 15_000, "the reply to the longest message");
  });
});

describe("while the channel is stopped", () => {
  it("a POST answers 503 with Retry-After, and the same message is taken once the channel runs again", async () => {
    const g = await boot();
    const b = new WebBrowser(pageOf(g));
    const conv = newConversationId();
    const tab = await open(b, conv);
    const slot = g.gateway.slot("web");
    const channel = slot?.channel;
    const sink = slot && g.gateway.messageDispatcher?.sinkFor(slot);
    if (!channel || !sink) throw new Error("the web channel is not loaded");
    await channel.stop();
    const refused = await b.say(conv, "are you back?", "msg-while-stopped");
    expect(refused.status, await refused.clone().text()).toBe(503);
    expect(refused.headers.get("retry-after")).toMatch(/^\d+$/);
    await channel.start(sink);
    expect((await b.say(conv, "are you back?", "msg-while-stopped")).status).toBe(202);
    await eventually(reply(tab, "ok: are you back?"), 15_000, "the reply once the channel runs");
  });
});

describe("browsers and tabs", () => {
  it("two browsers never see each other's conversations or events, even under the same conversation id", async () => {
    const g = await boot();
    const ana = new WebBrowser(pageOf(g));
    const bo = new WebBrowser(pageOf(g));
    const conv = newConversationId("shared");
    const anaTab = await open(ana, conv);
    const boTab = await open(bo, conv);
    expect(await ana.clientId()).not.toBe(await bo.clientId());
    await anaTab.say("I am Ana");
    await eventually(reply(anaTab, "ok: I am Ana"), 15_000, "Ana's reply");
    await boTab.say("I am Bo");
    await eventually(reply(boTab, "ok: I am Bo"), 15_000, "Bo's reply");
    await sleep(300);
    expect(anaTab.messages.map((m) => m.markdown)).toEqual(["ok: I am Ana"]);
    expect(boTab.messages.map((m) => m.markdown)).toEqual(["ok: I am Bo"]);
    expect(anaTab.userMessages.map((u) => u.text)).not.toContain("I am Bo");
    expect(boTab.userMessages.map((u) => u.text)).not.toContain("I am Ana");
    expect((await ana.history(conv)).messages.map((m) => m.text)).toEqual(["I am Ana", "ok: I am Ana"]);
    expect((await bo.history(conv)).messages.map((m) => m.text)).toEqual(["I am Bo", "ok: I am Bo"]);
    const boRequest = g.model.requests.find((r) => contentText(r.messages.at(-1)?.content) === "I am Bo");
    expect(JSON.stringify(boRequest?.messages)).not.toContain("Ana");

    // Bo cannot answer Ana's question, even with its ids.
    g.model.enqueue({
      toolCalls: [{ name: "ask_clarification", args: { question: "Tea or coffee?", options: ["Tea", "Coffee"] } }],
    });
    await anaTab.say("what should I drink?");
    const question = await eventually(() => anaTab.messages.find((m) => m.buttons.length === 2), 15_000, "Ana's question");
    const before = g.model.requests.length;
    const forged = { id: "forged-1", messageId: question.id, questionId: question.questionId, buttonId: question.buttons[0]?.id };
    await bo.request("POST", conversationsRoute(conv, "actions"), { json: forged });
    await sleep(500);
    expect(g.model.requests.length, "the model must not hear Bo's click").toBe(before);
    expect(anaTab.messages.find((m) => m.id === question.id)?.buttons.map((b) => b.label)).toEqual(["Tea", "Coffee"]);
  });

  it("two tabs of one browser both get the reply, and the other tab gets the user's message", async () => {
    const g = await boot();
    const b = new WebBrowser(pageOf(g));
    const conv = newConversationId();
    const one = await open(b, conv);
    const two = await open(b, conv);
    expect((await one.say("from tab one", "msg-tab-one")).status).toBe(202);
    const first = await eventually(reply(one, "ok: from tab one"), 15_000, "the reply in tab one");
    const second = await eventually(reply(two, "ok: from tab one"), 15_000, "the reply in tab two");
    expect(second.id).toBe(first.id);
    await eventually(
      () => two.userMessages.find((u) => u.id === "msg-tab-one" && u.text === "from tab one"),
      5_000,
      "the user event",
    );
    expect(g.model.requests).toHaveLength(1);
  });
});

describe("replay", () => {
  it("a stream opened with ?after= or Last-Event-ID gets exactly the events it missed", async () => {
    const g = await boot();
    const b = new WebBrowser(pageOf(g));
    const conv = newConversationId();
    const first = await open(b, conv);
    await first.say("first");
    await eventually(reply(first, "ok: first"), 15_000, "the first reply");
    const seen = Number(first.lastEventId);
    expect(seen).toBeGreaterThan(0);
    await first.close();

    g.model.enqueue({ text: "The second reply arrives while no page listens.", chunkSize: 8, delayMs: 10 });
    expect((await b.say(conv, "second")).status).toBe(202);
    await eventually(
      async () => (await b.history(conv)).messages.some((m) => m.text === "The second reply arrives while no page listens."),
      15_000,
      "the second reply in the history",
    );
    const missed = "The second reply arrives while no page listens.";
    for (const options of [{ after: seen }, { lastEventId: String(seen) }, { after: 0, lastEventId: String(seen) }]) {
      const tab = await open(b, conv, options);
      await eventually(reply(tab, missed), 5_000, `the missed reply, opened with ${JSON.stringify(options)}`);
      const ids = tab.events.map((e) => Number(e.id)).filter((id) => id > 0);
      expect(Math.min(...ids), "nothing from before the gap").toBeGreaterThan(seen);
      expect(new Set(ids).size, "no event twice").toBe(ids.length);
      expect(tab.messages.map((m) => m.markdown)).toEqual([missed]);
      expect(tab.userMessages.map((u) => u.text)).toEqual(["second"]);
      expect(tab.resets).toBe(0);
    }
  });

  it("a gap older than the buffer gives reset, and the history then has what was missed", async () => {
    const g = await boot({ edit_interval_ms: 0 });
    const b = new WebBrowser(pageOf(g));
    const conv = newConversationId();
    await b.ensureSession();
    const long = Array.from({ length: 150 }, (_, i) => `w${i}`).join(" ");
    // Each reply is a message and its edits: enough of them push the first events out of the 200
    // kept. Sequence numbers are compared with the first one, wherever the server starts counting.
    const start = (await b.history(conv)).seq;
    for (let i = 0; (await b.history(conv)).seq - start < 260; i++) {
      if (i > 20) throw new Error("the replies made too few events to overflow the buffer");
      g.model.enqueue({ text: long, chunkSize: 4, delayMs: 2 });
      await b.say(conv, `long one ${i}`);
      await eventually(async () => (await b.history(conv)).messages.filter((m) => m.text === long).length > i, 15_000, "a reply");
    }
    const tab = await open(b, conv, { after: start + 1 });
    await eventually(() => tab.resets > 0, 5_000, "a reset event");
    await eventually(() => tab.history?.messages.some((m) => m.text === long), 5_000, "the history, fetched after the reset");
    expect(tab.messages, "no stale events before the reset").toEqual([]);
  });

  it("a page that reconnects after a restart gets the new process's events, or a reset", async () => {
    const g = await boot();
    const b = new WebBrowser(pageOf(g));
    const conv = newConversationId();
    const before = await open(b, conv);
    const firstSeq = before.history?.seq ?? 0;
    await before.say("before the restart");
    await eventually(reply(before, "ok: before the restart"), 15_000, "the reply before the restart");
    const lastSeen = before.lastEventId;
    await before.close();
    await restart();
    // While the page waits to reconnect (EventSource waits the server's `retry: 2000`), the new
    // process answers messages until its own count of events has passed the page's last id.
    const sent: string[] = [];
    do {
      const text = `after ${sent.length + 1}`;
      sent.push(text);
      await b.say(conv, text);
      await eventually(async () => (await b.history(conv)).messages.some((m) => m.text === `ok: ${text}`), 15_000, text);
    } while (sent.length < 2 || (await b.history(conv)).seq <= Number(lastSeen));
    // EventSource reconnects to the URL it opened (…?after=<history seq>) with Last-Event-ID.
    const tab = await open(b, conv, { after: firstSeq, lastEventId: lastSeen });
    await sleep(500);
    // Every event of the new process counts: the user's messages too (a late edit alone would
    // bring a reply back as a new message, README).
    const shown = tab.messages.map((m) => m.markdown);
    const users = tab.userMessages.map((u) => u.text);
    expect(
      tab.resets > 0 || sent.every((text) => shown.includes(`ok: ${text}`) && users.includes(text)),
      `Last-Event-ID ${lastSeen} from the old process; after the restart the page got ${JSON.stringify(tab.events.map((e) => [e.id, e.event]))} for ${JSON.stringify(sent)}`,
    ).toBe(true);
  });
});

describe("history", () => {
  it("after a restart: the messages come back from the checkpoint, the open question with its buttons, and a click resumes", async () => {
    const g = await boot();
    const b = new WebBrowser(pageOf(g));
    const conv = newConversationId();
    const tab = await open(b, conv);
    g.model.enqueue({ text: "Noted: **tea**, no sugar." });
    await tab.say("I like <tea> & biscuits");
    await eventually(reply(tab, "Noted: **tea**, no sugar."), 15_000, "the first reply");
    g.model.enqueue({
      toolCalls: [{ name: "ask_clarification", args: { question: "Which size?", options: ["Small", "Large"] } }],
    });
    await tab.say("order one for me");
    await eventually(
      () => tab.messages.find((m) => m.text.includes("Which size?") && m.buttons.length === 2),
      15_000,
      "the question",
    );
    await tab.close();

    await restart();
    const again = await open(b, conv);
    const history = again.history;
    expect(history?.messages.map((m) => [m.role, m.text])).toEqual([
      ["user", "I like <tea> & biscuits"],
      ["assistant", "Noted: **tea**, no sugar."],
      ["user", "order one for me"],
    ]);
    expect(history?.messages[0]?.html).toContain("&lt;tea&gt; &amp; biscuits");
    expect(history?.messages[1]?.html).toContain("<strong>tea</strong>");
    expect(history?.pending?.text).toContain("Which size?");
    expect(history?.pending?.buttons.map((x) => x.label)).toEqual(["Small", "Large"]);
    expect(history?.pending?.questionId).toBeTruthy();

    g.model.enqueue({ text: "A large one is on its way." });
    expect((await again.click("Large")).status).toBe(202);
    await eventually(reply(again, "A large one is on its way."), 15_000, "the reply after the click");
    expect(lastToolResult(g.model), "the restarted gateway shares the model").toBe("Large");
    const answered = await b.history(conv);
    expect(answered.pending).toBeNull();
    expect(answered.messages.some((m) => m.text.includes("Which size?") && m.text.includes("Large"))).toBe(true);
    expect(answered.messages.at(-1)?.text).toBe("A large one is on its way.");
  });

  it("brings back every open call of a tool approval after a restart, and each can be decided there", async () => {
    const recording = recordingTools();
    const g = await boot(
      {},
      { tools: recording.tools, agent: { approvals: { send_email: { decisions: ["approve", "reject"] } } } },
    );
    const b = new WebBrowser(pageOf(g));
    const conv = newConversationId("approve");
    const tab = await open(b, conv);
    g.model.enqueue({
      toolCalls: [
        { name: "send_email", args: { to: "ana@example.com", subject: "one" } },
        { name: "send_email", args: { to: "bo@example.com", subject: "two" } },
      ],
    });
    await tab.say("send both");
    await eventually(
      () => tab.messages.filter((m) => m.buttons.some((x) => x.label === "Approve")).length === 2,
      15_000,
      "two calls",
    );
    await tab.close();

    await restart();
    const again = await open(b, conv);
    const waiting = again.history?.waiting ?? [];
    expect(waiting.map((m) => m.text.match(/"to": "([^"]+)"/)?.[1])).toEqual(["ana@example.com", "bo@example.com"]);
    expect(waiting.every((m) => m.buttons.map((x) => x.label).join() === "Approve,Reject")).toBe(true);
    expect(again.history?.pending?.id).toBe(waiting[0]?.id);

    g.model.enqueue({ text: "Both sent." });
    for (const message of waiting) {
      const buttonId = message.buttons.find((x) => x.label === "Approve")!.id;
      const res = await b.request("POST", `/api/conversations/${conv}/actions`, {
        json: { id: `approve-${message.id}`, messageId: message.id, questionId: message.questionId, buttonId },
      });
      expect(res.status).toBe(202);
    }
    await eventually(reply(again, "Both sent."), 15_000, "the reply after both approvals");
    expect(recording.calls.map((c) => c.args.to)).toEqual(["ana@example.com", "bo@example.com"]);
  });

  it("/new gives a fresh thread: the history is empty and the model no longer hears the old messages", async () => {
    const g = await boot();
    const b = new WebBrowser(pageOf(g));
    const conv = newConversationId();
    const tab = await open(b, conv);
    await tab.say("remember the word pineapple");
    await eventually(reply(tab, "ok: remember the word pineapple"), 15_000, "the first reply");
    const shown = tab.messages.length;
    await tab.say("/new");
    await eventually(() => tab.messages.length > shown, 15_000, "the answer to /new");
    expect((await b.history(conv)).messages).toEqual([]);
    await tab.say("what was the word?");
    await eventually(reply(tab, "ok: what was the word?"), 15_000, "the reply in the new thread");
    const last = g.model.requests.at(-1);
    expect(JSON.stringify(last?.messages)).not.toContain("pineapple");
    expect((await b.history(conv)).messages.map((m) => m.text)).toEqual(["what was the word?", "ok: what was the word?"]);
  });
});

const LONG = [
  "# Trip plan",
  "",
  "Day one starts **early**: the train leaves at `07:10` from platform 4, so pack the night before.",
  "",
  "- Tickets & passports",
  "- Snacks for <the kids>",
  "- A charger",
  "",
  "```",
  "budget = 120 * 3",
  "  # per day",
  "```",
  "",
  "Day two is free. Walk by the river, see the old town, and be back at the hotel by six for dinner.",
].join("\n");

/** What a person reads of LONG on the page (white-space: pre-wrap). */
const LONG_READ = [
  "Trip plan",
  "",
  "Day one starts early: the train leaves at 07:10 from platform 4, so pack the night before.",
  "",
  "• Tickets & passports",
  "• Snacks for <the kids>",
  "• A charger",
  "budget = 120 * 3",
  "  # per day",
  "Day two is free. Walk by the river, see the old town, and be back at the hotel by six for dinner.",
].join("\n");

describe("replies", () => {
  it("a long reply streams in several edits, shows typing first, and ends with the exact text", async () => {
    const g = await boot({ edit_interval_ms: 50 });
    const b = new WebBrowser(pageOf(g));
    const tab = await open(b, newConversationId());
    // The indicator shows once a reply takes longer than gateway.typing_delay_ms (500 ms).
    g.model.enqueue({ text: LONG, chunkSize: 6, delayMs: 8, firstByteMs: 1_200 });
    await tab.say("plan my trip");
    const message = await eventually(reply(tab, LONG), 20_000, "the exact final Markdown");
    expect(message.versions.length, "several versions").toBeGreaterThanOrEqual(4);
    expect(message.text).toBe(LONG_READ);
    expect(message.versions.at(-1)?.text).toBe(LONG_READ);
    expect(tab.typing.length, "typing before the reply").toBeGreaterThan(0);
    expect(tab.typing[0]?.at).toBeLessThanOrEqual(message.versions[0]?.at ?? 0);
    expect(tab.messages).toHaveLength(1);
    expect(tab.problems).toEqual([]);
  });

  it("shows the agent's raw HTML and unsafe links as text, and links only http, https and mailto", async () => {
    const g = await boot();
    const b = new WebBrowser(pageOf(g));
    const tab = await open(b, newConversationId());
    const text =
      "Look: <img src=x onerror=alert(1)> then [click](javascript:alert(1)), ![pic](https://example.com/p.png), " +
      "[docs](https://example.com/docs) and [mail](mailto:a@example.com)";
    g.model.enqueue({ text });
    await tab.say("show me links");
    const message = await eventually(reply(tab, text), 15_000, "the reply");
    expect(tab.problems).toEqual([]);
    expect(message.html).not.toMatch(/<img|<script|javascript:[^<]*"/i);
    expect(message.html).toContain('href="https://example.com/docs"');
    expect(message.html).toContain('href="mailto:a@example.com"');
    expect(message.text).toContain("<img src=x onerror=alert(1)>");
  });
});

describe("files", () => {
  it("a file the agent sends is offered on a file event and downloads for its owner only", async () => {
    const g = await boot();
    const b = new WebBrowser(pageOf(g));
    const conv = newConversationId();
    const tab = await open(b, conv);
    await tab.say("hello");
    await eventually(reply(tab, "ok: hello"), 15_000, "the first reply");
    // The page cannot upload, so the file is put in the thread's folder as if the agent wrote it.
    const threadId = await g.gateway.bindingStore?.currentThread(`web:${await b.clientId()}:${conv}`);
    expect(threadId).toBeTruthy();
    const folder = path.join(g.dir, "files", String(threadId));
    await mkdir(folder, { recursive: true });
    const notes = Buffer.from("Agenda\n1. Budget\n2. Hiring\n");
    writeFileSync(path.join(folder, "notes.txt"), notes);

    g.model.enqueue({ toolCalls: [{ name: "send_file", args: { name: "notes.txt" } }] }, { text: "Here are your notes." });
    await tab.say("send me my notes");
    await eventually(reply(tab, "Here are your notes."), 15_000, "the reply");
    const file = await eventually(() => tab.files.find((f) => f.status !== undefined), 15_000, "the file, downloaded");
    expect(file).toMatchObject({ name: "notes.txt", mime: "text/plain", kind: "file", size: notes.byteLength, status: 200 });
    expect(Buffer.from(file.data ?? []).equals(notes)).toBe(true);

    const other = new WebBrowser(pageOf(g));
    await other.ensureSession();
    const stranger = await other.request("GET", file.url);
    expect(stranger.status, "another browser's download").toBe(404);
    expect((await fetch(new URL(file.url, pageOf(g)))).status, "a request without cookies").toBe(404);
  });
});
