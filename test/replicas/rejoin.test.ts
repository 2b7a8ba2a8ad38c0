/**
 * Two gateways in this process on one PostgreSQL schema, on a real LangGraph API server (the
 * `remote` backend, whose runs outlive a gateway): the Telegram leader stops while a reply is
 * streaming, leaving the run going; the other replica takes the channel and the unfinished
 * message over, rejoins the run and posts its whole answer, and the chat's next message, sent
 * right after the stop, is answered only after it.
 */
import { afterEach, describe, expect, it } from "vitest";
import { RemoteAgentConfig } from "../../src/config/schema.js";
import { RemoteHarness } from "../../src/harness/index.js";
import { silentLogger } from "../../src/log/logger.js";
import { eventually, startTestGateway, type TestGateway } from "../../src/testing/gateway.js";
import { TelegramDriver } from "../fakes/telegram/driver.js";
import { useLangGraphServer } from "../harness/remote-helpers.js";
import { freshSchema } from "../helpers/postgres.js";

const lg = useLangGraphServer();
const running: TestGateway[] = [];
const closing: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const gw of running.splice(0)) await gw.stop(false);
  for (const close of closing.splice(0)) await close().catch(() => undefined);
});

const FIRST = `The first answer, streamed slowly: ${"word ".repeat(60).trim()}.`;
const SECOND = "The second answer.";

describe("a replica that stops mid-reply on a backend whose runs go on", () => {
  it("the next replica rejoins the run and posts its answer before it answers the chat's next message", async () => {
    const s = await lg.subject("agent");
    closing.push(() => s.close());
    const server = lg.server();
    // Each gateway has its own harness (a gateway closes its harness when it stops).
    const harnessB = new RemoteHarness({
      settings: RemoteAgentConfig.parse({ url: server.url, assistant_id: "agent", api_key: server.apiKey }),
      logger: silentLogger(),
    });
    closing.push(() => harnessB.close());
    const { url } = await freshSchema("rejoin");
    const driver = await TelegramDriver.start({ mode: "polling" });
    closing.push(() => driver.close());
    const channels = { telegram: driver.channelConfig({ gatewayUrl: "" }) };
    const storage = { kind: "postgres", url };
    const a = await startTestGateway({ channels, storage, replicaId: "replica-a", harness: s.harness, drainMs: 200 });
    running.push(a);
    const b = await startTestGateway({ channels, storage, replicaId: "replica-b", harness: harnessB });
    running.push(b);
    s.mock.enqueue({ text: FIRST, chunkSize: 6, delayMs: 60 });
    s.mock.enqueue({ text: SECOND });
    await driver.userSays("tell me slowly");
    await eventually(() => driver.botMessages().some((m) => m.text.startsWith("The first")), 20_000, "the first reply streaming");
    // A stops: the run goes on on the server, its message stays unfinished for the next replica.
    await a.stop(false);
    running.splice(running.indexOf(a), 1);
    await driver.userSays("and then?");
    await eventually(() => driver.botMessages().some((m) => m.text === SECOND), 30_000, "the second answer");
    const texts = driver.botMessages().map((m) => m.text);
    const whole = texts.indexOf(FIRST);
    expect(whole, `the rejoined answer in ${JSON.stringify(texts)}`).toBeGreaterThanOrEqual(0);
    expect(whole).toBeLessThan(texts.indexOf(SECOND));
    expect(texts.filter((t) => t === SECOND)).toHaveLength(1);
    // The first run was joined, not started again: the model was asked twice in all.
    expect(s.mock.requests.length).toBe(2);
  }, 60_000);
});
