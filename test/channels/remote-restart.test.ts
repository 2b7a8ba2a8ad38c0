/**
 * The remote backend across a restart: Antler (the real CLI, in a child process) streams five
 * Telegram replies from an agent on a LangGraph API server, is stopped mid-stream (SIGKILL, or
 * SIGTERM with replies longer than its drain) and started again. The server runs went on
 * meanwhile; the new process finds each one by its message's tag and answers from it. Every user
 * gets the whole, exact answer, no restart notice, and the server saw exactly five runs.
 */
import { writeFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { NOTICES } from "../../src/core/dispatcher.js";
import { MESSAGES } from "../../src/harness/run-errors.js";
import { eventually, freePort } from "../contract/gateway.js";
import { MODEL_URL_ENV } from "../fakes/langgraph/graphs.js";
import { lastUserText, type MockModel, mockModelConfig, startMockModel } from "../fakes/openai.js";
import { FakeTelegram, type FakeUser } from "../fakes/telegram/index.js";
import { useLangGraphServer } from "../harness/remote-helpers.js";
import { type CliProcess, spawnCli, tempConfig } from "../helpers/cli.js";

const lg = useLangGraphServer();
const USERS: FakeUser[] = [1, 2, 3, 4, 5].map((n) => ({ id: 7000 + n, first_name: `User${n}`, username: `user${n}` }));

/** Each user's answer: about 125 chunks, distinct per user. */
const answerTo = (question: string) =>
  `Answer to "${question}": ${"a gateway that stops must not lose the reply it was streaming. ".repeat(7)}The end.`;

let model: MockModel | undefined;
let telegram: FakeTelegram | undefined;
let antler: CliProcess | undefined;

afterEach(async () => {
  antler?.child.kill("SIGKILL");
  await antler?.exited;
  await telegram?.close();
  await model?.close();
});

function start(config: string): CliProcess {
  return spawnCli(["start", "--config", config]);
}

describe("remote backend, stopped mid-stream", () => {
  for (const signal of ["SIGKILL", "SIGTERM"] as const) {
    it(`${signal}: answers all five users from their server runs after the restart, with no second run`, {
      timeout: 90_000,
    }, async () => {
      model = await startMockModel();
      // SIGTERM first drains for 5 s: its replies take about 15 s, so they outlast the drain.
      const delayMs = signal === "SIGTERM" ? 120 : 40;
      model.setDefault((req) => ({ text: answerTo(lastUserText(req)), chunkSize: 4, delayMs }));
      process.env[MODEL_URL_ENV] = model.url;
      telegram = await FakeTelegram.start();
      const server = lg.server();
      const runsBefore = await server.runCount();
      const config = tempConfig("");
      writeFileSync(
        config,
        stringify({
          server: { port: await freePort() },
          storage: { path: "./antler.db" },
          logging: { level: "warn", format: "json" },
          models: [mockModelConfig(model)],
          agent: { backend: "remote", remote: { url: server.url, assistant_id: "agent", api_key: server.apiKey } },
          channels: {
            telegram: {
              enabled: true,
              bot_token: telegram.token,
              api_root: telegram.apiRoot,
              mode: "polling",
              edit_interval_ms: 250,
            },
          },
        }),
      );
      const fake = telegram;
      const chatOf = (u: FakeUser) => fake.botMessages(u.id);

      antler = start(config);
      for (const u of USERS) fake.dm(u, `question of ${u.first_name}`);
      await eventually(() => USERS.every((u) => (chatOf(u).at(-1)?.text.length ?? 0) > 0), 30_000, "all five replies streaming");
      antler.child.kill(signal);
      expect(await antler.exited, antler.output()).toBe(signal === "SIGTERM" ? 0 : null);
      const cut = USERS.filter((u) => chatOf(u).some((m) => m.text === answerTo(`question of ${u.first_name}`)));
      expect(cut.length, "the kill came after every reply had finished: make the replies longer").toBeLessThan(USERS.length);

      antler = start(config);
      const output = antler.output;
      await eventually(
        () => USERS.every((u) => chatOf(u).some((m) => m.text === answerTo(`question of ${u.first_name}`))),
        45_000,
        "every user's whole answer after the restart",
      ).catch((err: unknown) => {
        throw new Error(`${String(err)}\n--- antler output ---\n${output()}`);
      });
      for (const u of USERS) {
        const texts = chatOf(u).map((m) => m.text);
        expect(
          texts.some((t) => t.includes(NOTICES.restarted) || t.includes(MESSAGES.cancelled)),
          texts.join(" | "),
        ).toBe(false);
        // A graceful stop says why the reply pauses; a killed process cannot.
        expect(
          texts.some((t) => t.includes(MESSAGES.detached)),
          `${texts.join(" | ")}\n${output()}`,
        ).toBe(signal === "SIGTERM");
      }
      expect((await server.runCount()) - runsBefore).toBe(5);
      expect(model.requests).toHaveLength(5);
    });
  }
});
