/** Discord's emitter and the packed button ids: the parts of the adapter that need no Gateway. */
import { describe, expect, it } from "vitest";
import { decodeCustomId, encodeCustomId, MAX_CUSTOM_ID } from "../../src/channels/discord/buttons.js";
import { escapeDiscord, toDiscordMarkdown } from "../../src/channels/discord/format.js";
import { keyTail, refFor } from "../../src/channels/discord/inbound.js";

describe("discord markdown", () => {
  it("keeps what Discord shows and rewrites what it does not", () => {
    const md =
      "# Title\n\n**bold**, *it*, ~~gone~~ and `code`\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n- [x] done\n\n---\n\n#### small";
    expect(toDiscordMarkdown(md)).toBe(
      "# Title\n\n**bold**, *it*, ~~gone~~ and `code`\n\n```\na | b\n1 | 2\n```\n\n- ☑ done\n\n───\n\n**small**",
    );
  });

  it("escapes markup in text, mentions included, and line starts that would open a block", () => {
    expect(escapeDiscord("a_b *c* <@123> ||x|| [l](u)")).toBe("a\\_b \\*c\\* \\<@123\\> \\|\\|x\\|\\| \\[l\\](u)");
    expect(escapeDiscord("# no\n- no\n> no\n1. no\nmid # - > fine")).toBe("\\# no\n\\- no\n\\> no\n1\\. no\nmid # - \\> fine");
  });

  it("links only web targets, and defuses fences inside code", () => {
    expect(toDiscordMarkdown("[site](https://example.com) and [x](javascript:alert(1))")).toBe(
      "[site](https://example.com) and x (javascript:alert(1))",
    );
    expect(toDiscordMarkdown("```js\nconst s = '```';\n```")).toBe("```js\nconst s = '`\u200b``';\n```");
  });
});

describe("discord custom_id", () => {
  it("packs ids of any characters and reads them back", () => {
    for (const target of [
      { questionId: "q1", buttonId: "0", keyTail: "" },
      { questionId: "a.b:c|d", buttonId: "approve:2", keyTail: ":u123456789012345678" },
      { questionId: "x".repeat(40), buttonId: "edit:0", keyTail: ":123" },
    ]) {
      expect(decodeCustomId(encodeCustomId(target))).toEqual(target);
    }
    expect(encodeCustomId({ questionId: "q1", buttonId: "0", keyTail: "" })).toBe("2.q11.0");
  });

  it("refuses ids Antler did not write", () => {
    for (const id of ["", "hello", "9.q1", "2.q11.0:not/a tail", ".x"]) expect(decodeCustomId(id)).toBeUndefined();
  });

  it("fits a uuid question id, an approval button and a user tail in Discord's 100", () => {
    const id = encodeCustomId({
      questionId: "0f8fad5b-d9cb-469f-a165-70867728950e",
      buttonId: "reject:12",
      keyTail: ":u123456789012345678",
    });
    expect(id.length).toBeLessThanOrEqual(MAX_CUSTOM_ID);
  });
});

describe("discord conversation keys", () => {
  const rules = { name: "discord", thread: true, scope: "chat" as const };
  const from = { id: "555", text: "hello there\nsecond line", user: "Alice" };

  it("keys a DM by its channel, and a thread by its parent and itself", () => {
    expect(refFor(rules, { guildId: null, channelId: "9", parentId: null }, "1", from)).toEqual({
      channel: "discord",
      key: "discord:@me:9",
      chatId: "9",
      chatType: "direct",
    });
    expect(refFor(rules, { guildId: "G", channelId: "T", parentId: "C" }, "1", from)).toMatchObject({
      key: "discord:G:C:T",
      chatId: "C",
      threadId: "T",
      workspace: "G",
      chatType: "group",
    });
  });

  it("keys a channel message by the thread it will start, named after its first line", () => {
    expect(refFor(rules, { guildId: "G", channelId: "C", parentId: null }, "1", from)).toMatchObject({
      key: "discord:G:C:555",
      threadId: "555",
      extra: { startThread: true, threadName: "hello there" },
    });
  });

  it("without threads, keys per channel or per user, and a click adds the tail its channel does not show", () => {
    const channel = refFor({ ...rules, thread: false }, { guildId: "G", channelId: "C", parentId: null }, "7", from);
    expect(channel).toMatchObject({ key: "discord:G:C", replyToId: "555" });
    const user = refFor({ ...rules, thread: false, scope: "user" }, { guildId: "G", channelId: "C", parentId: null }, "7", from);
    expect(user.key).toBe("discord:G:C:u7");
    expect(keyTail(user, "C")).toBe(":u7");
    expect(keyTail(channel, "C")).toBe("");
    const threaded = refFor(rules, { guildId: "G", channelId: "C", parentId: null }, "7", from);
    expect(keyTail(threaded, "555")).toBe("");
    expect(keyTail(threaded, "C")).toBe(":555");
  });
});
