/**
 * ContractDriver over the fake Discord. The test conversation is Alice's DM with the bot. The
 * group is the guild channel "general": the first message mentions the bot; with `thread: true`
 * the adapter starts a thread from it (thread id = that message's id) and later messages and
 * clicks happen there without a mention; with `thread: false` every message mentions the bot in
 * "general". Refused clicks are answered with ephemeral messages only the clicker sees.
 */
import { eventually } from "../../../src/testing/wait.js";
import type { BotFile, ContractDriver, GroupDriver, GroupMember, UserFile, VisibleMessage } from "../../contract/driver.js";
import type { UserEvent } from "./events.js";
import { ALICE, BOB, CAROL, CHANNELS, FakeDiscord, type FakeOptions, type FakeUser, type MessageView } from "./index.js";

export { ALICE, BOB, CAROL, OTHER_BOT } from "./index.js";

const MEMBERS: Record<GroupMember, FakeUser> = { asker: ALICE, other: BOB, approver: CAROL };

export interface DiscordDriverOptions {
  /** `channels.discord.thread` (default true). */
  thread?: boolean;
  /** `channels.discord.session_scope`, left out of the config when unset. */
  scope?: "user" | "chat";
  editIntervalMs?: number;
  /** Extra `channels.discord` keys. */
  config?: Record<string, unknown>;
  fake?: FakeOptions;
}

export class DiscordDriver implements ContractDriver {
  readonly channelName = "discord";
  readonly streams = true;
  readonly buttons = true;
  readonly webhook = false;
  readonly minEditIntervalMs: number;
  readonly group: GroupDriver;
  private last: UserEvent | undefined;
  /** The group conversation's first message: with `thread: true`, also the thread's id. */
  private groupStarter: string | undefined;

  private constructor(
    readonly fake: FakeDiscord,
    private readonly options: DiscordDriverOptions,
  ) {
    this.minEditIntervalMs = options.editIntervalMs ?? 300;
    this.group = this.makeGroup();
  }

  static async start(options: DiscordDriverOptions = {}): Promise<DiscordDriver> {
    return new DiscordDriver(await FakeDiscord.start(options.fake), options);
  }

  private get threaded(): boolean {
    return this.options.thread ?? true;
  }

  channelConfig(_env: { gatewayUrl: string }): Record<string, unknown> {
    return {
      enabled: true,
      bot_token: this.fake.token,
      application_id: this.fake.applicationId,
      api_base: this.fake.apiBase,
      gateway_url: this.fake.gatewayUrl,
      edit_interval_ms: this.minEditIntervalMs,
      thread: this.threaded,
      ...(this.options.scope ? { session_scope: this.options.scope } : {}),
      ...this.options.config,
    };
  }

  get dmChannel(): string {
    return this.fake.dmChannelOf(ALICE);
  }

  async userSays(text: string): Promise<void> {
    this.fake.dm(ALICE, text);
    await this.deliver();
  }

  /**
   * Alice sends a file in her DM. An Ogg voice note without a caption goes as Discord's voice
   * message (flagged, alone); any other file is an upload, with the caption as the text.
   */
  async userSendsFile(file: UserFile): Promise<void> {
    const voice = file.kind === "audio" && !file.caption && /^audio\/ogg\b/i.test(file.mime);
    if (voice) this.fake.sendVoice(ALICE, file.data, { name: file.name });
    else this.fake.sendFiles(ALICE, [{ name: file.name, data: file.data, contentType: file.mime }], file.caption ?? "");
    await this.deliver();
  }

  /** Files the bot posted in Alice's DM; an image content type is what makes Discord show a picture. */
  botFiles(): BotFile[] {
    return this.botMessagesIn(this.dmChannel).flatMap((m) =>
      m.files.map((f) => ({
        name: f.name,
        data: f.data,
        kind: f.contentType?.startsWith("image/") ? ("image" as const) : ("file" as const),
      })),
    );
  }

  async redeliverLast(): Promise<void> {
    const last = this.last;
    if (!last) throw new Error("nothing was delivered yet");
    const before = last.record.sent;
    this.fake.events.redeliver(last);
    await until(() => last.record.sent > before, "the redelivery");
  }

  /** The Gateway has no acknowledgement: an event the bot's session was sent counts as acked. */
  async lastDelivery(): Promise<"acked" | "refused"> {
    const last = this.last;
    if (!last) throw new Error("nothing was delivered yet");
    await until(() => last.record.sent > 0, "the delivery");
    return "acked";
  }

  async click(label: string): Promise<void> {
    const message = await newestShowing(() => this.botMessagesIn(this.dmChannel), label);
    this.fake.click(message.id, label, ALICE);
    await this.deliver();
  }

  /** The bot's own message arriving on the Gateway, as Discord sends every message back. */
  async botEcho(text: string): Promise<void> {
    this.fake.botSays(this.dmChannel, text);
    await this.deliver();
  }

  /** What the bot wrote in Alice's DM (the driver's own echoes left out). */
  botMessages(): VisibleMessage[] {
    return this.botMessagesIn(this.dmChannel).map(visible);
  }

  async close(): Promise<void> {
    await this.fake.close();
  }

  private botMessagesIn(channelId: string): MessageView[] {
    return this.fake.messagesIn(channelId).filter((m) => m.author.id === this.fake.bot.id && !m.injected && !m.deleted);
  }

  /** Resolves once the newest user event reached a connected Gateway session. */
  private async deliver(): Promise<void> {
    const event = this.fake.events.userEvents.at(-1);
    if (!event) throw new Error("the fake made no event");
    this.last = event;
    await until(() => event.record.sent > 0, `delivery of ${event.key}`);
  }

  private groupChannel(): string | undefined {
    if (!this.threaded) return CHANNELS.general;
    const starter = this.groupStarter;
    return starter && this.fake.threads().some((t) => t.id === starter) ? starter : undefined;
  }

  private async groupThread(): Promise<string> {
    await until(() => this.groupChannel() !== undefined, `the thread from message ${this.groupStarter}`);
    return this.groupChannel() as string;
  }

  private makeGroup(): GroupDriver {
    return {
      userId: (member) => MEMBERS[member].id,
      sharedThread: !(this.options.scope === "user" && !this.threaded),
      privateClickNotice: true,
      privateTextNotice: false,
      says: async (member, text) => {
        const user = MEMBERS[member];
        if (!this.threaded || !this.groupStarter) {
          const m = this.fake.say(CHANNELS.general, user, text, { mention: true });
          this.groupStarter ??= m.id;
        } else {
          this.fake.say(await this.groupThread(), user, text);
        }
        await this.deliver();
      },
      click: async (member, label) => {
        const channel = this.threaded ? await this.groupThread() : CHANNELS.general;
        const message = await newestShowing(() => this.botMessagesIn(channel), label);
        this.fake.click(message.id, label, MEMBERS[member]);
        await this.deliver();
      },
      botMessages: () => {
        const channel = this.groupChannel();
        return channel ? this.botMessagesIn(channel).map(visible) : [];
      },
      shownOnlyTo: (member) => this.fake.ephemeralFor(MEMBERS[member].id),
    };
  }
}

export function discordDriver(options: DiscordDriverOptions = {}): Promise<DiscordDriver> {
  return DiscordDriver.start(options);
}

async function newestShowing(messages: () => MessageView[], label: string): Promise<MessageView> {
  let found: MessageView | undefined;
  await until(() => {
    found = messages()
      .filter((m) => m.buttons.includes(label))
      .at(-1);
    return found !== undefined;
  }, `a bot message showing "${label}"`);
  return found as MessageView;
}

async function until(check: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  await eventually(check, timeoutMs, `fake discord: ${what}`);
}

function visible(m: MessageView): VisibleMessage {
  return {
    id: m.id,
    text: m.text,
    buttons: m.buttons,
    versions: m.versions.map((v) => ({ text: v.text, at: v.at })),
    ...(m.threadId ? { threadId: m.threadId } : {}),
  };
}
