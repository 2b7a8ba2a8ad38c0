/**
 * The channel contract suite: what every adapter must do for a user, end to end through a real
 * gateway. Each adapter's test file calls `channelContract(label, makeDriver)` with a driver over
 * its fake platform (see driver.ts). The loopback channel runs it too.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { contentText, type MockModel } from "../fakes/openai.js";
import type { ContractDriver, VisibleMessage } from "./driver.js";
import { eventually, freePort, sleep, startTestGateway, type TestGateway, type TestGatewayOptions } from "./gateway.js";
import { groupContract, withApprover } from "./group-contract.js";

const REPLY =
  "Antler streams this reply in small pieces. Each piece arrives a little later than the one before. " +
  "The user should see it grow, and the last version must match exactly.";

export interface ChannelContractOptions {
  /** More gateway options per test, e.g. another agent backend (and the model behind it). */
  gateway?: () => Promise<Partial<TestGatewayOptions>>;
}

export function channelContract(
  label: string,
  makeDriver: () => Promise<ContractDriver>,
  options: ChannelContractOptions = {},
): void {
  describe(`channel contract: ${label}`, () => {
    let driver: ContractDriver;
    let gw: TestGateway;
    let model: MockModel;

    beforeEach(async () => {
      driver = await makeDriver();
      const port = await freePort();
      const config = driver.channelConfig({ gatewayUrl: `http://127.0.0.1:${port}` });
      const channels = { [driver.channelName]: withApprover(driver, config) };
      gw = await startTestGateway({ ...(await options.gateway?.()), channels, port });
      model = gw.model;
      const slot = gw.gateway.slot(driver.channelName);
      expect(slot?.report().state, JSON.stringify(slot?.report())).toBe("running");
    });

    afterEach(async () => {
      await gw?.stop();
      await driver?.close();
    });

    const withText = (text: string) => () => driver.botMessages().find((m) => m.text === text);

    it("answers a message with a streamed reply whose final text is exact", async () => {
      model.enqueue({ text: REPLY, chunkSize: 6, delayMs: 15 });
      await driver.userSays("tell me something");
      const message = await eventually(withText(REPLY), 15_000, "the exact final reply");
      const lastUser = model.requests
        .at(-1)
        ?.messages.filter((m) => m.role === "user")
        .at(-1);
      expect(contentText(lastUser?.content)).toBe("tell me something");
      if (driver.streams) {
        expect(message.versions.length, "the reply should arrive in more than one version").toBeGreaterThanOrEqual(2);
        const first = message.versions[0]!;
        const last = message.versions.at(-1)!;
        const bound = (last.at - first.at) / driver.minEditIntervalMs + 2;
        expect(message.versions.length - 1).toBeLessThanOrEqual(bound);
      }
    });

    it("asks a question and resumes when the user clicks an option", async () => {
      const question = await ask(driver, model, "Which colour do you like?");
      if (driver.buttons) {
        expect(question.buttons).toEqual(["Red", "Blue"]);
        model.enqueue({ text: "Blue it is." });
        await driver.click("Blue");
      } else {
        expect(question.text).toMatch(/1\.\s*Red[\s\S]*2\.\s*Blue/);
        model.enqueue({ text: "Blue it is." });
        await driver.userSays("2");
      }
      await eventually(withText("Blue it is."), 15_000, "the reply after the answer");
      expect(lastToolResult(model)).toBe("Blue");
      if (driver.buttons) {
        const updated = await eventually(
          () => driver.botMessages().find((m) => m.id === question.id && m.buttons.length === 0),
          5_000,
          "the question without buttons",
        );
        expect(updated.text).toContain("Blue");
      }
    });

    it("resumes a question answered in text", async () => {
      await ask(driver, model, "Which colour for the text answer?");
      model.enqueue({ text: "Green, noted." });
      await driver.userSays("Green, actually");
      await eventually(withText("Green, noted."), 15_000, "the reply after a free-text answer");
      expect(lastToolResult(model)).toBe("Green, actually");
    });

    it("ignores messages from the bot itself", async () => {
      const before = model.requests.length;
      await driver.botEcho("this came from a bot");
      await sleep(400);
      expect(model.requests.length).toBe(before);
      expect(driver.botMessages().some((m) => m.text.includes("this came from a bot"))).toBe(false);
    });

    it("answers a redelivered event only once", async () => {
      model.enqueue({ text: "Only once." });
      await driver.userSays("hello once");
      await driver.redeliverLast();
      await eventually(withText("Only once."), 15_000, "the reply");
      await driver.redeliverLast();
      await sleep(400);
      const users = model.requests.filter((r) => contentText(r.messages.at(-1)?.content) === "hello once");
      expect(users).toHaveLength(1);
      expect(driver.botMessages().filter((m) => m.text === "Only once.")).toHaveLength(1);
    });

    groupContract(() => ({ driver, model }));
  });
}

async function ask(driver: ContractDriver, model: MockModel, question: string): Promise<VisibleMessage> {
  model.enqueue({ toolCalls: [{ name: "ask_clarification", args: { question, options: ["Red", "Blue"] } }] });
  await driver.userSays("help me choose a colour");
  return eventually(() => driver.botMessages().find((m) => m.text.includes(question)), 15_000, "the question in the chat");
}

/** Content of the newest tool message the model received. */
function lastToolResult(model: MockModel): string | undefined {
  const last = model.requests.at(-1);
  const tool = last?.messages.filter((m) => m.role === "tool").at(-1);
  return tool ? contentText(tool.content) : undefined;
}
