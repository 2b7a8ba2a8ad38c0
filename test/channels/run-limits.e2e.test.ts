/**
 * A run over `max_tool_calls_per_run`, end to end on the fake Telegram Bot API: a whole gateway
 * (dispatcher, renderer, SQLite, the embedded agent on the mock model) cuts the run, the chat
 * gets the reply and then a notice that says why it stopped, and the next message in the same
 * conversation runs normally (the mock model refuses a history with an unanswered tool call).
 */
import { tool } from "langchain";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { limitNotice } from "../../src/core/notices.js";
import { eventually, freePort, startTestGateway, type TestGateway } from "../contract/gateway.js";
import { TelegramDriver } from "../fakes/telegram/driver.js";

let driver: TelegramDriver | undefined;
let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.stop();
  await driver?.close();
  gw = undefined;
  driver = undefined;
});

const searched: string[] = [];
const search = tool(
  async ({ q }) => {
    searched.push(q);
    return `3 pages about ${q}`;
  },
  { name: "search", description: "Search the web.", schema: z.object({ q: z.string() }) },
);
const searches = (...qs: string[]) => ({ toolCalls: qs.map((q) => ({ name: "search", args: { q } })) });

describe("a run cut at its tool-call limit, in a Telegram DM", () => {
  it("posts the reply, then the notice; the conversation goes on", async () => {
    driver = await TelegramDriver.start({ mode: "polling", editIntervalMs: 100 });
    const port = await freePort();
    const channels = { telegram: driver.channelConfig({ gatewayUrl: `http://127.0.0.1:${port}` }) };
    gw = await startTestGateway({ channels, port, agent: { max_tool_calls_per_run: 2 }, tools: [search] });
    const telegram = driver;
    // The model keeps searching: two calls run, the third is dropped, and at the limit it keeps
    // asking for more (dropped too) with a sentence of its own.
    gw.model.enqueue(searches("otters"), searches("sea otters", "river otters"), {
      ...searches("otter diets"),
      text: "Otters are playful mammals.",
    });
    await telegram.userSays("tell me everything about otters");

    const notice = limitNotice({ kind: "tool_calls", max: 2 });
    expect(notice).toBe("I stopped early: this run reached its limit of 2 tool calls.");
    await eventually(() => telegram.botMessages().some((m) => m.text === notice), 15_000, "the limit notice");
    expect(telegram.botMessages().map((m) => m.text)).toEqual(["Otters are playful mammals.", notice]);
    expect(searched).toEqual(["otters", "sea otters"]);
    expect(gw.model.requests).toHaveLength(3);

    gw.model.enqueue({ text: "Anything else about otters?" });
    await telegram.userSays("thanks");
    await eventually(
      () => telegram.botMessages().some((m) => m.text === "Anything else about otters?"),
      15_000,
      "the next reply",
    );
    expect(telegram.botMessages()).toHaveLength(3);
    const history = gw.model.requests[3]?.messages ?? [];
    expect(history.filter((m) => m.role === "tool")).toHaveLength(2);
    expect(history.at(-1)).toMatchObject({ role: "user", content: "thanks" });
  });
});
