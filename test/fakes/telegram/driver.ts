/** ContractDriver over the fake Telegram: a DM between Alice and the bot, by polling or webhook. */
import { eventually } from "../../../src/testing/wait.js";
import type { BotFile, ContractDriver, GroupDriver, GroupMember, UserFile, VisibleMessage } from "../../contract/driver.js";
import { type ChatMessage, FakeTelegram as Fake, type FakeTelegram, type FakeUser, type Update } from "./index.js";

export const ALICE: FakeUser = { id: 2001, first_name: "Alice", username: "alice" };
export const BOB: FakeUser = { id: 2002, first_name: "Bob", username: "bob" };
export const CAROL: FakeUser = { id: 2003, first_name: "Carol", username: "carol" };
/** The group of the "who may answer" tests: Alice asks, Bob is someone else, Carol approves. */
export const TEAM_GROUP = { id: -100900800, type: "supergroup" as const };
const MEMBERS: Record<GroupMember, FakeUser> = { asker: ALICE, other: BOB, approver: CAROL };
export const OTHER_BOT: FakeUser = { id: 3003, first_name: "Other", username: "other_helper_bot", is_bot: true };
export const WEBHOOK_SECRET = "contract_secret-123";
export const WEBHOOK_PATH = "/webhooks/telegram";

export interface TelegramDriverOptions {
  mode: "polling" | "webhook";
  editIntervalMs?: number;
  /** Extra channel config keys. */
  config?: Record<string, unknown>;
}

export class TelegramDriver implements ContractDriver {
  readonly channelName = "telegram";
  readonly streams = true;
  readonly buttons = true;
  readonly minEditIntervalMs: number;
  readonly webhook: boolean;
  private last: Update | undefined;

  private constructor(
    readonly fake: FakeTelegram,
    private readonly options: TelegramDriverOptions,
  ) {
    this.minEditIntervalMs = options.editIntervalMs ?? 300;
    this.webhook = options.mode === "webhook";
  }

  static async start(options: TelegramDriverOptions): Promise<TelegramDriver> {
    return new TelegramDriver(await Fake.start({ webhookRetryMs: 100 }), options);
  }

  channelConfig(env: { gatewayUrl: string }): Record<string, unknown> {
    return {
      enabled: true,
      bot_token: this.fake.token,
      api_base: this.fake.apiRoot,
      mode: this.options.mode,
      edit_interval_ms: this.minEditIntervalMs,
      ...(this.options.mode === "webhook"
        ? { webhook_url: `${env.gatewayUrl}${WEBHOOK_PATH}`, webhook_secret: WEBHOOK_SECRET }
        : {}),
      ...this.options.config,
    };
  }

  async userSays(text: string): Promise<void> {
    await this.deliver(this.fake.dm(ALICE, text));
  }

  async redeliverLast(): Promise<void> {
    const last = this.last;
    if (!last) throw new Error("nothing was delivered yet");
    const before = this.fake.updates.handedCount(last.update_id);
    this.fake.redeliver(last);
    await this.until(() => this.fake.updates.handedCount(last.update_id) > before, "the redelivery");
  }

  /**
   * Webhook: the status of the update's first POST. Polling: an update the bot did not confirm
   * (with the next offset) is handed out again, which the fake counts.
   */
  async lastDelivery(): Promise<"acked" | "refused"> {
    const id = this.last?.update_id;
    if (id === undefined) throw new Error("nothing was delivered yet");
    if (this.webhook) {
      const attempts = () => this.fake.updates.deliveries.filter((d) => d.update_id === id);
      await this.until(() => attempts().length > 0, "the webhook's answer");
      const first = attempts()[0]!.status;
      return first >= 200 && first < 300 ? "acked" : "refused";
    }
    const deadline = Date.now() + 2_500;
    while (Date.now() < deadline) {
      if (this.fake.updates.handedCount(id) > 1) return "refused";
      await new Promise((r) => setTimeout(r, 20));
    }
    return "acked";
  }

  async click(label: string): Promise<void> {
    await this.deliver(this.fake.click(ALICE.id, ALICE, label));
  }

  async botEcho(text: string): Promise<void> {
    // Telegram never shows a bot its own messages; what does arrive is another bot's message.
    await this.deliver(this.fake.say({ id: ALICE.id, type: "private" }, OTHER_BOT, text));
  }

  /** The bot's text messages; the files it posted are in {@link botFiles}. */
  botMessages(): VisibleMessage[] {
    return textOnly(this.fake.botMessages(ALICE.id)).map(visible);
  }

  /**
   * Alice sends a file in her DM with the bot: an image as a photo (its caption is the text),
   * an OGG audio as a voice note, other audio as an audio file, anything else as a document.
   */
  async userSendsFile(file: UserFile): Promise<void> {
    const dm = { id: ALICE.id, type: "private" as const };
    const caption = file.caption !== undefined ? { caption: file.caption } : {};
    let update: Update;
    if (file.kind === "image") update = this.fake.sendPhoto(dm, ALICE, file.data, caption);
    else if (file.kind === "audio" && file.mime === "audio/ogg") update = this.fake.sendVoice(dm, ALICE, file.data, caption);
    else if (file.kind === "audio")
      update = this.fake.sendAudio(dm, ALICE, file.data, file.name, { ...caption, mime: file.mime });
    else update = this.fake.sendDocument(dm, ALICE, file.data, file.name, { ...caption, mime: file.mime });
    await this.deliver(update);
  }

  /** Photos and documents the bot posted in Alice's DM, with their bytes. */
  botFiles(): BotFile[] {
    return this.fake
      .botFiles(ALICE.id)
      .map((f) => ({ name: f.name, data: f.data, kind: f.kind === "photo" ? ("image" as const) : ("file" as const) }));
  }

  /** A supergroup where every member's message mentions the bot; refused clicks get an alert. */
  readonly group: GroupDriver = {
    userId: (member) => String(MEMBERS[member].id),
    sharedThread: true,
    privateClickNotice: true,
    privateTextNotice: false,
    says: async (member, text) => {
      await this.deliver(this.fake.say(TEAM_GROUP, MEMBERS[member], `@${this.fake.bot.username} ${text}`));
    },
    click: async (member, label) => {
      await this.deliver(this.fake.click(TEAM_GROUP.id, MEMBERS[member], label));
    },
    botMessages: () => textOnly(this.fake.botMessages(TEAM_GROUP.id)).map(visible),
    shownOnlyTo: (member) => this.fake.clickAnswersSeenBy(MEMBERS[member].id),
  };

  async close(): Promise<void> {
    await this.fake.close();
  }

  /** Resolves once the update reached the bot (handed out by getUpdates, or a 2xx from the webhook). */
  async deliver(update: Update): Promise<void> {
    this.last = update;
    await this.until(() => this.fake.updates.handedCount(update.update_id) > 0, `delivery of update ${update.update_id}`);
  }

  private async until(check: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
    await eventually(check, timeoutMs, what);
  }
}

function textOnly(messages: ChatMessage[]): ChatMessage[] {
  return messages.filter((m) => !m.media);
}

function visible(m: ChatMessage): VisibleMessage {
  return {
    id: String(m.message_id),
    text: m.text,
    buttons: m.keyboard.flat().map((b) => b.text),
    versions: m.versions.map((v) => ({ ...v })),
    ...(m.threadId !== undefined ? { threadId: String(m.threadId) } : {}),
  };
}
