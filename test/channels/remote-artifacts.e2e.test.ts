/**
 * A remote agent behind the gateway, end to end through telegraf on the Telegram fake: the real
 * LangGraph API server's `presenter` graph reads the run context each Telegram user's message
 * brings, and the files it presents (DeerFlow's `present_files`) are fetched from a stand-in for
 * DeerFlow's artifact route and uploaded into the chat after the reply; one that cannot be
 * fetched is named in a notice.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { DEERFLOW_RUN_CONTEXT } from "../../src/config/remote.js";
import { eventually, startTestGateway, type TestGateway } from "../contract/gateway.js";
import { type ArtifactRoute, startArtifactRoute } from "../fakes/langgraph/artifact-route.js";
import { MODEL_URL_ENV } from "../fakes/langgraph/graphs.js";
import { type MockModel, startMockModel } from "../fakes/openai.js";
import { ALICE, BOB, TelegramDriver } from "../fakes/telegram/driver.js";
import { useLangGraphServer } from "../harness/remote-helpers.js";

const lg = useLangGraphServer();
const OUT = "/mnt/user-data/outputs";

let route: ArtifactRoute;
beforeAll(async () => {
  route = await startArtifactRoute();
});
afterAll(async () => {
  await route.close();
});

let gw: TestGateway | undefined;
let model: MockModel;
let telegram: TelegramDriver;
beforeEach(async () => {
  model = await startMockModel();
  process.env[MODEL_URL_ENV] = model.url;
  telegram = await TelegramDriver.start({ mode: "polling" });
  const server = lg.server();
  gw = await startTestGateway({
    channels: { telegram: telegram.channelConfig({ gatewayUrl: "" }) },
    model,
    agent: {
      backend: "remote",
      remote: {
        url: server.url,
        assistant_id: "presenter",
        api_key: server.apiKey,
        context: { ...DEERFLOW_RUN_CONTEXT, is_plan_mode: true },
        artifacts: { url: route.template, headers: { "X-Owner-User-Id": "{user_id}" } },
      },
    },
  });
});
afterEach(async () => {
  await gw?.stop(false);
  gw = undefined;
  await telegram.close();
  await model.close();
  route.files.clear();
  route.requests.length = 0;
});

const texts = (chat: number) =>
  telegram.fake
    .botMessages(chat)
    .filter((m) => !m.media)
    .map((m) => m.text);

/** The contexts the graph read in the server thread of the Telegram user `userId`. */
async function contextsOf(userId: number): Promise<Record<string, unknown>[]> {
  const client = lg.server().client;
  const [thread] = await client.threads.search({ metadata: { channel_user_id: String(userId) } });
  if (!thread) throw new Error(`no server thread for user ${userId}`);
  return ((await client.threads.getState(thread.thread_id)).values as { contexts: Record<string, unknown>[] }).contexts;
}

describe("a remote agent on Telegram", () => {
  it("a file the graph presents arrives in the chat as an upload after the reply", async () => {
    const report = new Uint8Array(Buffer.from("%PDF-1.7 the quarterly numbers"));
    route.files.set(`${OUT}/q3 report.pdf`, report);
    model.enqueue(
      { toolCalls: [{ name: "present_files", args: { filepaths: [`${OUT}/q3 report.pdf`] } }] },
      { text: "Here is the report." },
    );
    await telegram.userSays("make the Q3 report");
    await eventually(() => telegram.botFiles().length > 0, 10_000, "the upload");
    const [file] = telegram.fake.botFiles(ALICE.id);
    expect(file?.kind).toBe("document");
    expect(file?.name).toBe("q3 report.pdf");
    expect(Buffer.from(file!.data).equals(Buffer.from(report))).toBe(true);
    // After the reply, in the same chat.
    const all = telegram.fake.botMessages(ALICE.id);
    const reply = all.findIndex((m) => m.text === "Here is the report.");
    expect(reply).toBeGreaterThanOrEqual(0);
    expect(all.findIndex((m) => m.media)).toBeGreaterThan(reply);
    // Fetched once, for Alice's person id.
    expect(route.requests).toHaveLength(1);
    expect(route.requests[0]?.headers["x-owner-user-id"]).toBe("default-telegram-2001");
  });

  it("a presented file that cannot be fetched is named in a notice; the reply still comes", async () => {
    model.enqueue({ toolCalls: [{ name: "present_files", args: { filepaths: [`${OUT}/missing.csv`] } }] }, { text: "Exported." });
    await telegram.userSays("export the table");
    const notice = "I couldn't get “missing.csv” from the agent, so it was not sent.";
    await eventually(() => texts(ALICE.id).includes(notice), 10_000, "the notice");
    expect(texts(ALICE.id)).toContain("Exported.");
    expect(telegram.fake.botFiles(ALICE.id)).toEqual([]);
  });

  it("two Telegram users reach the graph as two people, with the configured switches", async () => {
    model.enqueue({ text: "Hello Alice." }, { text: "Hello Bob." });
    await telegram.userSays("hi");
    await eventually(() => texts(ALICE.id).includes("Hello Alice."), 10_000, "Alice's reply");
    await telegram.deliver(telegram.fake.dm(BOB, "hi"));
    await eventually(() => texts(BOB.id).includes("Hello Bob."), 10_000, "Bob's reply");
    const [alice] = await contextsOf(ALICE.id);
    const [bob] = await contextsOf(BOB.id);
    const switches = { thinking_enabled: true, is_plan_mode: true, subagent_enabled: false };
    expect(alice).toMatchObject({
      ...switches,
      user_id: "default-telegram-2001",
      channel_user_id: "2001",
      channel_name: "telegram",
      chat_type: "direct",
    });
    expect(bob).toMatchObject({
      ...switches,
      user_id: "default-telegram-2002",
      channel_user_id: "2002",
      channel_name: "telegram",
      chat_type: "direct",
    });
    expect(alice?.thread_id).not.toBe(bob?.thread_id);
  });
});
