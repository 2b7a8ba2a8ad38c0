/**
 * Telegram DM users for the probes: the fake Bot API (test/fakes/telegram) with a proxy in front
 * that can apply a share of sendMessage/editMessageText calls and then answer 502 anyway, the
 * one platform failure after which a second copy of a reply is not the gateway's fault. It
 * records which messages such calls created, so the ledger can count those copies apart.
 */
import { FakeTelegram, type FakeUser, type Update } from "../fakes/telegram/index.js";
import { seeded } from "../helpers/seeded.js";
import { type BotMessage, Ledger, type Outcome } from "./ledger.js";
import { expectedReply, type FaultKind, type ReplyKind } from "./model.js";
import { type HttpProxy, startProxy } from "./proxy.js";

export interface TelegramWorldOptions {
  /** Share (0-1) of sendMessage/editMessageText calls applied by the fake and then answered 502. */
  appliedThen5xx?: number;
}

export class TelegramWorld {
  readonly ledger = new Ledger();
  /** Messages created by a sendMessage that got a 502 although the fake applied it. */
  readonly excused = new Set<string>();
  appliedThen5xxCalls = 0;
  private readonly updates: Update[] = [];

  private constructor(
    readonly fake: FakeTelegram,
    private readonly proxy: HttpProxy,
  ) {}

  static async start(options: TelegramWorldOptions = {}): Promise<TelegramWorld> {
    const fake = await FakeTelegram.start();
    const rng = seeded(7);
    let world: TelegramWorld | undefined;
    const proxy = await startProxy(fake.apiRoot, async (x) => {
      const method = /\/(sendMessage|editMessageText)$/.exec(x.req.url ?? "")?.[1];
      if (!method || !options.appliedThen5xx || rng() >= options.appliedThen5xx) return x.pass();
      const up = await x.fetch();
      const result = (
        JSON.parse(up.body.toString("utf8")) as { ok: boolean; result?: { message_id?: number; chat?: { id: number } } }
      ).result;
      if (up.status !== 200 || !world) {
        x.res.writeHead(up.status, { "content-type": "application/json" });
        x.res.end(up.body);
        return;
      }
      world.appliedThen5xxCalls++;
      if (method === "sendMessage" && result?.chat) world.excused.add(`${result.chat.id}/${result.message_id}`);
      x.res.writeHead(502, { "content-type": "application/json" });
      x.res.end(JSON.stringify({ ok: false, error_code: 502, description: "Bad Gateway" }));
    });
    world = new TelegramWorld(fake, proxy);
    return world;
  }

  /** `channels.telegram` for the gateway, in polling mode through the proxy. */
  channelConfig(extra: Record<string, unknown> = {}): Record<string, unknown> {
    return { enabled: true, mode: "polling", bot_token: this.fake.token, api_base: this.proxy.url, ...extra };
  }

  user(n: number): FakeUser {
    return { id: 700_000 + n, first_name: `User${n}`, username: `user_${n}` };
  }

  /** User `n` writes `<id> <kind>`; the ledger learns which reply it must get. */
  send(n: number, id: string, kind: ReplyKind | FaultKind): void {
    const user = this.user(n);
    const expected = kind === "long" || kind === "medium" || kind === "short" ? expectedReply(id, kind) : undefined;
    this.ledger.add({ id, chat: String(user.id), expected, sentAt: Date.now() });
    this.updates.push(this.fake.dm(user, `${id} ${kind}`));
  }

  /** User `n` writes `text`, which the caller keeps its own account of (the ledger does not learn it). */
  say(n: number, text: string): void {
    this.updates.push(this.fake.dm(this.user(n), text));
  }

  /** Every update sent so far was handed to the bot and confirmed (acked by a later getUpdates offset). */
  get allConfirmed(): boolean {
    return this.updates.every((u) => this.fake.updates.handedCount(u.update_id) > 0) && this.fake.updates.pendingCount === 0;
  }

  /** Chats of user `n` for every n in `users` that show some bot text. */
  showing(users: number[]): number {
    return users.filter((n) => this.fake.botMessages(this.user(n).id).some((m) => m.text.trim() !== "")).length;
  }

  view = (chat: string): BotMessage[] =>
    this.fake.botMessages(Number(chat)).map((m) => ({
      id: `${chat}/${m.message_id}`,
      text: m.text,
      firstAt: m.versions[0]?.at ?? m.date,
    }));

  evaluate(): Outcome {
    return this.ledger.evaluate(this.view, this.excused);
  }

  async close(): Promise<void> {
    await this.proxy.close();
    await this.fake.close();
  }
}
