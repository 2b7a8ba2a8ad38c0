/**
 * The sample corpus (test/fixtures/markdown) through every emitter, each output read by that
 * platform's fake: Telegram's HTML parser, Slack's mrkdwn reader, Feishu's card checks, DingTalk's
 * markdown reader, Discord's Markdown reader. A platform must accept every message, show every
 * word of the reply, and nothing may be over its limit once converted, also where long replies
 * are split.
 */
import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { dingtalkEmitter, markdownTitle, toDingTalkMarkdown } from "../../src/channels/dingtalk/format.js";
import { DingTalkChannel } from "../../src/channels/dingtalk/index.js";
import { discordEmitter, toDiscordMarkdown } from "../../src/channels/discord/format.js";
import { DiscordChannel } from "../../src/channels/discord/index.js";
import { messageCard } from "../../src/channels/feishu/cards.js";
import { feishuEmitter, toPlainText as feishuPlain } from "../../src/channels/feishu/format.js";
import { FeishuChannel } from "../../src/channels/feishu/index.js";
import { type MarkdownEmitter, measureFor, plainEmitter, renderMarkdown } from "../../src/channels/markdown/index.js";
import { slackEmitter, toMrkdwn } from "../../src/channels/slack/format.js";
import { SlackChannel } from "../../src/channels/slack/index.js";
import { telegramEmitter, toPlainText, toTelegramHtml } from "../../src/channels/telegram/format.js";
import { TelegramChannel } from "../../src/channels/telegram/index.js";
import type { Channel, ChannelContext, ConversationRef, HttpMount } from "../../src/channels/types.js";
import { joinMarkdownChunks, splitMarkdown } from "../../src/core/render/chunk.js";
import { fenceAtEnd } from "../../src/core/render/fence.js";
import { silentLogger } from "../../src/log/logger.js";
import { plain as dingtalkVisible } from "../fakes/dingtalk/chat.js";
import { MSG_PARAM_MAX_BYTES, WEBHOOK_TEXT_MAX_BYTES } from "../fakes/dingtalk/openapi.js";
import { readMarkdown as readDiscord } from "../fakes/discord/markdown.js";
import { CONTENT_MAX as DISCORD_CONTENT_MAX } from "../fakes/discord/validate.js";
import { cardProblem, cardText } from "../fakes/feishu/model.js";
import { LIMITS } from "../fakes/feishu/state.js";
import { parseMrkdwn, SLACK_UPDATE_TEXT_MAX } from "../fakes/slack/mrkdwn.js";
import { MAX_TEXT as TELEGRAM_MAX_TEXT } from "../fakes/telegram/api.js";
import { parseHtml, parsePlain } from "../fakes/telegram/html.js";
import { corpus, labelsOnly, longSamples, missingFromReply, missingWords, type Sample } from "../fixtures/markdown/corpus.js";

const noHttp: HttpMount = { route() {}, unroute() {} };

/** The adapter as configured by default, for the capabilities it declares (it is never started). */
function channel(Class: new (ctx: ChannelContext<never>) => Channel, config: Record<string, unknown>): Channel {
  return new Class({ name: "corpus", config: config as never, logger: silentLogger(), http: noHttp, baseDir: "." });
}

const bytes = (text: string) => Buffer.byteLength(text, "utf8");
const feishuRef: ConversationRef = { channel: "feishu", key: "feishu:t:oc_1", chatId: "oc_1", chatType: "direct" };

interface Platform {
  name: string;
  channel: Channel;
  emitter: MarkdownEmitter;
  /**
   * What a user of the platform reads from one message with this Markdown, as its fake reads the
   * adapter's output. Fails where the platform would refuse the message or misread its markup.
   */
  read(markdown: string): string;
}

const platforms: Platform[] = [
  {
    name: "telegram",
    channel: channel(TelegramChannel, { bot_token: "1:corpus" }),
    emitter: telegramEmitter,
    read(markdown) {
      const shown = parseHtml(toTelegramHtml(markdown)).text;
      // The adapter resends plain text when Telegram refuses the HTML: that must fit as well.
      const fallback = parsePlain(toPlainText(markdown)).text;
      expect(shown.length).toBeLessThanOrEqual(TELEGRAM_MAX_TEXT);
      expect(fallback.length).toBeLessThanOrEqual(TELEGRAM_MAX_TEXT);
      return shown;
    },
  },
  {
    name: "slack",
    channel: channel(SlackChannel, { bot_token: "xoxb-corpus", app_token: "xapp-corpus" }),
    emitter: slackEmitter,
    read(markdown) {
      const text = toMrkdwn(markdown);
      expect(text.length).toBeLessThanOrEqual(SLACK_UPDATE_TEXT_MAX);
      return parseMrkdwn(text).text;
    },
  },
  {
    name: "feishu",
    channel: channel(FeishuChannel, { app_id: "cli_0123456789abcdef", app_secret: "s" }),
    emitter: feishuEmitter,
    read(markdown) {
      const card = messageCard(feishuRef, markdown);
      expect(cardProblem(card)).toBeUndefined();
      expect(bytes(JSON.stringify(card))).toBeLessThanOrEqual(LIMITS.cardBytes);
      // The fallback `text` message (150 KB) carries the plain text.
      expect(bytes(JSON.stringify({ text: feishuPlain(markdown) }))).toBeLessThanOrEqual(150 * 1024);
      return cardText(card as Parameters<typeof cardText>[0]);
    },
  },
  {
    name: "dingtalk",
    channel: channel(DingTalkChannel, { client_id: "corpus", client_secret: "s" }),
    emitter: dingtalkEmitter,
    read(markdown) {
      const text = toDingTalkMarkdown(markdown);
      expect(bytes(text)).toBeLessThanOrEqual(WEBHOOK_TEXT_MAX_BYTES);
      expect(bytes(JSON.stringify({ title: markdownTitle(markdown), text }))).toBeLessThanOrEqual(MSG_PARAM_MAX_BYTES);
      return dingtalkVisible(text);
    },
  },
  {
    name: "discord",
    channel: channel(DiscordChannel, { bot_token: "corpus" }),
    emitter: discordEmitter,
    read(markdown) {
      const text = toDiscordMarkdown(markdown);
      expect(text.length).toBeLessThanOrEqual(DISCORD_CONTENT_MAX);
      return readDiscord(text);
    },
  },
];

const samples = corpus();
const long = longSamples();

describe("the Markdown corpus", () => {
  it("covers what replies contain", () => {
    const all = samples.map((s) => s.markdown).join("\n");
    for (const needle of [
      "# ",
      "- [ ]",
      "- [x]",
      "  1. ",
      "|:---|",
      "```ts",
      "```python",
      "](https://",
      "\\*",
      "中文",
      "😀",
      "&",
      "<",
      ">",
    ]) {
      expect(all).toContain(needle);
    }
    expect(samples.length).toBeGreaterThanOrEqual(15);
  });

  it("is walked by the renderer alone: no adapter imports marked", () => {
    const root = new URL("../../src/", import.meta.url);
    const files = readdirSync(root, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".ts"));
    const walkers = files.filter((f) => /from "marked"/.test(readFileSync(new URL(f, root), "utf8")));
    expect(walkers.sort()).toEqual(["channels/markdown/walk.ts", "core/render/repair.ts"]);
  });

  it("names no emitter twice, and every adapter declares its own", () => {
    expect(new Set(platforms.map((p) => p.emitter.name)).size).toBe(platforms.length);
    for (const p of platforms) expect(p.channel.capabilities.markdown).toBe(p.emitter);
  });
});

describe.each(platforms)("$name: every corpus sample", (platform) => {
  it.each(samples.map((s) => [s.name, s] as [string, Sample]))("%s is accepted and shows every word", (_, sample) => {
    const shown = platform.read(sample.markdown);
    expect(shown.trim()).not.toBe("");
    expect(missingFromReply(sample.markdown, shown)).toEqual([]);
  });
});

describe.each(platforms)("$name: long replies split where the converted text fits", (platform) => {
  const { maxTextLength } = platform.channel.capabilities;
  const measure = measureFor(platform.channel.capabilities.markdown)!;

  it.each(long.map((s) => [s.name, s] as [string, Sample]))("%s", (_, sample) => {
    const chunks = splitMarkdown(sample.markdown, maxTextLength, measure);
    expect(joinMarkdownChunks(chunks)).toBe(sample.markdown);
    let shown = "";
    chunks.forEach((chunk, i) => {
      expect(measure(chunk), `chunk ${i}`).toBeLessThanOrEqual(maxTextLength);
      if (i < chunks.length - 1) expect(fenceAtEnd(chunk), `chunk ${i} leaves a code fence open`).toBeUndefined();
      shown += `${platform.read(chunk)}\n`;
    });
    expect(missingFromReply(sample.markdown, shown)).toEqual([]);
    // Chunks are well filled: the split is not far from the fewest messages the limit allows.
    expect(chunks.length).toBeLessThanOrEqual(Math.ceil(measure(sample.markdown) / (maxTextLength * 0.5)) + 1);
  });
});

describe("the long samples", () => {
  it("each need splitting on some platform, and the escapes alone push one past Slack's limit", () => {
    for (const sample of long) {
      const over = platforms.filter((p) => measureFor(p.emitter)!(sample.markdown) > p.channel.capabilities.maxTextLength);
      expect(over.length, sample.name).toBeGreaterThan(0);
    }
    const escapes = long.find((s) => s.name === "escape-heavy")!.markdown;
    expect(escapes.length).toBeLessThan(3500);
    expect(toMrkdwn(escapes).length).toBeGreaterThan(SLACK_UPDATE_TEXT_MAX);
  });
});

describe("the shared plain-text emitter", () => {
  it("is what Telegram and Feishu fall back to", () => {
    for (const { markdown } of samples) {
      expect(toPlainText(markdown)).toBe(renderMarkdown(markdown, plainEmitter));
      expect(feishuPlain(markdown)).toBe(renderMarkdown(markdown, plainEmitter));
    }
  });

  it("keeps every word, link targets included", () => {
    const withTargets: MarkdownEmitter = {
      ...labelsOnly,
      link: ({ label, plainLabel, href }) => (plainLabel === href ? `${href} ` : `${label} ${href} `),
    };
    for (const { name, markdown } of samples) {
      expect(missingWords(renderMarkdown(markdown, withTargets), renderMarkdown(markdown, plainEmitter)), name).toEqual([]);
    }
  });
});
