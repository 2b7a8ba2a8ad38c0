/**
 * The users and the model of the replica tests. Every user message is `<id> <kind>` and the mock
 * model answers it with a text only that message can get (the reliability suite's
 * `expectedReply`), so the chat itself tells which message each reply belongs to: the ledger
 * (test/reliability/ledger.ts) counts answers, losses and duplicates from it, and
 * {@link Users.outOfOrder} checks that a conversation's replies came in the order it was written.
 * Kind `ask` makes the agent call `ask_clarification` first; the answer is in its reply.
 */
import { type ChatCompletionRequest, lastUserText, type MockModel, type MockReply, startMockModel } from "../fakes/openai.js";
import type { FakeSlack } from "../fakes/slack/index.js";
import type { FakeTelegram, FakeUser } from "../fakes/telegram/index.js";
import { type BotMessage, Ledger, type Outcome } from "../reliability/ledger.js";
import { expectedReply, PROFILES, type ReplyKind } from "../reliability/model.js";
import { until } from "../reliability/util.js";

export type Kind = ReplyKind | "ask";

/** The options a question for message `id` offers (labels name the message, so a click is unambiguous). */
export function questionOptions(id: string): string[] {
  return [`Red ${id}`, `Blue ${id}`];
}

/** The reply message `id` of kind `ask` gets once its question was answered with `answer`. */
export function answeredReply(id: string, answer: string): string {
  return `Answer to ${id}: you chose ${answer} (end of ${id})`;
}

/** The mock model's script: `<id> <kind>` streams that message's own reply, `ask` asks first. */
export function script(req: ChatCompletionRequest): MockReply {
  const [id = "?", kind = "short"] = lastUserText(req).trim().split(/\s+/);
  if (kind === "ask") {
    const last = req.messages.at(-1);
    if (last?.role === "tool") return { text: answeredReply(id, String(last.content ?? "")), chunkSize: 8, delayMs: 5 };
    const args = { question: `Which colour for ${id}?`, options: questionOptions(id) };
    return { toolCalls: [{ name: "ask_clarification", args }] };
  }
  const replyKind = (kind in PROFILES ? kind : "short") as ReplyKind;
  const profile = PROFILES[replyKind];
  return { text: expectedReply(id, replyKind), chunkSize: profile.chunkSize, delayMs: profile.delayMs };
}

export async function startClusterModel(): Promise<MockModel> {
  const mock = await startMockModel();
  mock.setDefault(script);
  return mock;
}

/** Users of one platform, the ledger of what they sent, and the order checks. */
export abstract class Users {
  readonly ledger = new Ledger();
  /** Sent ids per chat, in the order they were sent. */
  protected readonly order = new Map<string, string[]>();

  /** The bot's messages in `chat` as the user sees them, oldest first. */
  abstract view(chat: string): BotMessage[];

  /** `answer`: for kind `ask`, the option the user will pick (its reply is then known). */
  protected record(chat: string, id: string, kind: Kind, answer?: string): void {
    const expected = kind !== "ask" ? expectedReply(id, kind) : answer !== undefined ? answeredReply(id, answer) : undefined;
    this.ledger.add({ id, chat, expected, sentAt: Date.now() });
    this.order.set(chat, [...(this.order.get(chat) ?? []), id]);
  }

  evaluate(): Outcome {
    return this.ledger.evaluate((chat) => this.view(chat));
  }

  /** Whether every message sent so far shows its complete reply (or, with `notices`, a notice in its place). */
  allAnswered(notices = false): boolean {
    const o = this.evaluate();
    return o.lost === 0 && (notices || o.byNotice === 0);
  }

  /**
   * Chats whose complete replies did not come in the order their messages were sent, e.g.
   * `chat 700012: m12-2 before m12-1`. Replies are ordered by when each first appeared. With
   * `notices`, a message answered by a notice (a restart notice in place of a cut reply) counts
   * as answered when that notice appeared (see `Ledger.answers`).
   */
  outOfOrder(notices = false): string[] {
    if (notices) return this.answersOutOfOrder();
    const out: string[] = [];
    for (const [chat, ids] of this.order) {
      const sent = this.ledger.sent.filter((m) => m.chat === chat);
      const firstSeen = new Map<string, number>();
      for (const b of this.view(chat)) {
        const owner = sent.find((m) => m.expected === b.text.trim());
        if (owner && !firstSeen.has(owner.id)) firstSeen.set(owner.id, b.firstAt);
      }
      const replied = ids.filter((id) => firstSeen.has(id));
      const byTime = [...replied].sort((a, b) => (firstSeen.get(a) as number) - (firstSeen.get(b) as number));
      const i = replied.findIndex((id, k) => byTime[k] !== id);
      if (i >= 0) out.push(`chat ${chat}: ${byTime[i]} before ${replied[i]}`);
    }
    return out;
  }

  private answersOutOfOrder(): string[] {
    const out: string[] = [];
    for (const [chat, ids] of this.order) {
      const byTime = this.ledger.answers(chat, this.view(chat)).map((a) => a.id);
      const answered = ids.filter((id) => byTime.includes(id));
      const i = answered.findIndex((id, k) => byTime[k] !== id);
      if (i >= 0) out.push(`chat ${chat}: ${byTime[i]} before ${answered[i]}`);
    }
    return out;
  }
}

/** Telegram DM users: user `n` is chat `700000 + n`. */
export class TelegramUsers extends Users {
  constructor(readonly fake: FakeTelegram) {
    super();
  }

  user(n: number): FakeUser {
    return { id: 700_000 + n, first_name: `User${n}`, username: `user_${n}` };
  }

  send(n: number, id: string, kind: Kind, answer?: string): void {
    const user = this.user(n);
    this.record(String(user.id), id, kind, answer);
    this.fake.dm(user, `${id} ${kind}`);
  }

  view(chat: string): BotMessage[] {
    return this.fake.botMessages(Number(chat)).map((m) => ({
      id: `${chat}/${m.message_id}`,
      text: m.text,
      firstAt: m.versions[0]?.at ?? m.date,
    }));
  }

  /** Replicas (clients) that sent or edited bot messages in `chat` from `since` (ms epoch) on. */
  writers(chat: string, since = 0): string[] {
    const calls = this.fake.calls.filter(
      (c) => ["sendMessage", "editMessageText"].includes(c.method) && String(c.params.chat_id) === chat && c.at >= since,
    );
    return [...new Set(calls.map((c) => c.client))];
  }

  /** Users (of `ns`) whose chat shows bot text that is not yet a complete reply: replies mid-stream. */
  streaming(ns: number[]): number[] {
    return ns.filter((n) => {
      const chat = String(this.user(n).id);
      const sent = this.ledger.sent.filter((m) => m.chat === chat);
      return this.view(chat).some((b) => b.text.trim() !== "" && !sent.some((m) => m.expected === b.text.trim()));
    });
  }

  /** getUpdates calls per client (replica name), as the fake saw them. */
  polls(since = 0): Map<string, number> {
    const out = new Map<string, number>();
    for (const c of this.fake.calls) {
      if (c.method === "getUpdates" && c.at >= since) out.set(c.client, (out.get(c.client) ?? 0) + 1);
    }
    return out;
  }
}

/** Slack DM users: user `U<n>` writes in DM `D<n>`; each send waits for Slack's delivery (retries included). */
export class SlackUsers extends Users {
  constructor(readonly fake: FakeSlack) {
    super();
  }

  chat(n: number): string {
    return `D${String(n).padStart(4, "0")}`;
  }

  userId(n: number): string {
    return `U${String(n).padStart(4, "0")}`;
  }

  async send(n: number, id: string, kind: Kind, answer?: string): Promise<void> {
    const channel = this.chat(n);
    this.record(channel, id, kind, answer);
    await this.fake.dm(`${id} ${kind}`, { channel, user: this.userId(n) });
  }

  view(chat: string): BotMessage[] {
    return this.fake.botMessages(chat).map((m) => ({ id: m.id, text: m.text, firstAt: m.versions[0]?.at ?? 0 }));
  }

  /** Replicas (clients) that posted or edited bot messages in `chat` from `since` (ms epoch) on. */
  writers(chat: string, since = 0): string[] {
    const calls = this.fake.api.calls.filter((c) => c.method.startsWith("chat.") && c.args.channel === chat && c.at >= since);
    return [...new Set(calls.map((c) => c.client))];
  }
}

/**
 * Waits until every chat of `users` shows an answer to each of its messages (a notice counts with
 * `notices`), or `timeoutMs` passed, then until the chats stay the same for 1.5 s, so a late
 * duplicate still shows. Returns the ms until answered.
 */
export async function settle(users: Users[], timeoutMs: number, notices = false): Promise<number> {
  const started = Date.now();
  await until(() => users.every((u) => u.allAnswered(notices)), timeoutMs, 200);
  const took = Date.now() - started;
  let last = "";
  await until(
    () => {
      const now = JSON.stringify(users.map((u) => u.evaluate()));
      const quiet = now === last;
      last = now;
      return quiet;
    },
    10_000,
    1_500,
  );
  return took;
}
