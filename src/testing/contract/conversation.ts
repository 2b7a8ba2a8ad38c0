/**
 * The contract's conversation part: a streamed reply with the exact final text, a question
 * answered by button and by text, the bot's own messages ignored, a redelivered event answered once.
 */
import { describe, expect, it } from "vitest";
import { eventually, sleep } from "../gateway.js";
import { contentText } from "../mock-model.js";
import { ask, type ContractContext, lastToolResult, withText } from "./shared.js";

const REPLY =
  "Antler streams this reply in small pieces. Each piece arrives a little later than the one before. " +
  "The user should see it grow, and the last version must match exactly.";

export function conversationContract(current: () => ContractContext): void {
  describe("conversation", () => {
    it("answers a message with a streamed reply whose final text is exact", async () => {
      const { driver, model } = current();
      model.enqueue({ text: REPLY, chunkSize: 6, delayMs: 15 });
      await driver.userSays("tell me something");
      const message = await eventually(withText(driver, REPLY), 15_000, "the exact final reply");
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
      const { driver, model } = current();
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
      await eventually(withText(driver, "Blue it is."), 15_000, "the reply after the answer");
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
      const { driver, model } = current();
      await ask(driver, model, "Which colour for the text answer?");
      model.enqueue({ text: "Green, noted." });
      await driver.userSays("Green, actually");
      await eventually(withText(driver, "Green, noted."), 15_000, "the reply after a free-text answer");
      expect(lastToolResult(model)).toBe("Green, actually");
    });

    it("ignores messages from the bot itself", async (test) => {
      const { driver, model } = current();
      if (!driver.botEcho) return test.skip("this platform never shows the bot its own messages");
      const before = model.requests.length;
      await driver.botEcho("this came from a bot");
      await sleep(400);
      expect(model.requests.length).toBe(before);
      expect(driver.botMessages().some((m) => m.text.includes("this came from a bot"))).toBe(false);
    });

    it("answers a redelivered event only once", async () => {
      const { driver, model } = current();
      model.enqueue({ text: "Only once." });
      await driver.userSays("hello once");
      await driver.redeliverLast();
      await eventually(withText(driver, "Only once."), 15_000, "the reply");
      await driver.redeliverLast();
      await sleep(400);
      const users = model.requests.filter((r) => contentText(r.messages.at(-1)?.content) === "hello once");
      expect(users).toHaveLength(1);
      expect(driver.botMessages().filter((m) => m.text === "Only once.")).toHaveLength(1);
    });
  });
}
