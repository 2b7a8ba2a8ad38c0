/**
 * The contract driver over the fake Slack. Two test conversations: a DM (replies at top level,
 * streamed by chat.update) or a channel thread opened by a mention (later messages are
 * follow-ups in that thread without a mention; replies stream natively).
 */
import type { BotFile, ContractDriver, GroupDriver, GroupMember, UserFile, VisibleMessage } from "../../contract/driver.js";
import { FakeSlack } from "./index.js";
import { slackConfigFor } from "./rig.js";

export interface SlackDriverOptions {
  mode: "socket" | "webhook";
  conversation: "dm" | "thread";
  /** Extra `channels.slack` keys. */
  config?: Record<string, unknown>;
}

const EDIT_INTERVAL_MS = 250;
/** The channel of the "who may answer" tests, and its members. */
const TEAM_CHANNEL = "C0777";
const MEMBERS: Record<GroupMember, string> = { asker: "UALICE", other: "UBOB", approver: "UCAROL" };

export class SlackDriver implements ContractDriver {
  readonly channelName = "slack";
  readonly streams = true;
  readonly buttons = true;
  readonly minEditIntervalMs = EDIT_INTERVAL_MS;
  readonly webhook: boolean;
  /** Root of the test thread, once the first mention opened it. */
  threadTs: string | undefined;
  /** Whether the last user event was acked (socket) or answered 2xx (webhook). */
  private lastOk: boolean | undefined;

  private constructor(
    readonly fake: FakeSlack,
    private readonly options: SlackDriverOptions,
  ) {
    this.webhook = options.mode === "webhook";
  }

  static async start(options: SlackDriverOptions): Promise<SlackDriver> {
    return new SlackDriver(await FakeSlack.start({ mode: options.mode }), options);
  }

  get chatId(): string {
    return this.options.conversation === "dm" ? "D0001" : "C0001";
  }

  channelConfig(env: { gatewayUrl: string }): Record<string, unknown> {
    this.fake.eventsUrl = `${env.gatewayUrl}/webhooks/${this.channelName}`;
    return { enabled: true, ...slackConfigFor(this.fake, { edit_interval_ms: EDIT_INTERVAL_MS, ...this.options.config }) };
  }

  async userSays(text: string): Promise<void> {
    const before = this.fake.deliveries.length;
    if (this.options.conversation === "dm") await this.fake.dm(text);
    else if (this.threadTs) await this.fake.say(text, { threadTs: this.threadTs });
    else this.threadTs = await this.fake.mention(text);
    // A channel mention comes as app_mention plus a message twin: refused if either was.
    this.lastOk = this.fake.deliveries.slice(before).every((d) => d.ok);
  }

  /**
   * Shares a file where `userSays` writes: in the DM, as a follow-up in the test thread, or (for
   * the first message of a thread conversation) with a mention that opens the thread. A voice
   * note is a Slack voice clip (file subtype `slack_audio`).
   */
  async userSendsFile(file: UserFile): Promise<void> {
    const before = this.fake.deliveries.length;
    const upload = { name: file.name, mime: file.mime, data: file.data, voice: file.kind === "audio" };
    const caption = file.caption ?? "";
    if (this.options.conversation === "dm") await this.fake.shareFile(upload, { channel: this.chatId, caption });
    else if (this.threadTs) await this.fake.shareFile(upload, { channel: this.chatId, caption, threadTs: this.threadTs });
    else this.threadTs = await this.fake.shareFile(upload, { channel: this.chatId, caption, mention: true });
    this.lastOk = this.fake.deliveries.slice(before).every((d) => d.ok);
  }

  /** Files the bot shared in the test conversation; Slack shows images (by type) inline. */
  botFiles(): BotFile[] {
    const thread = this.options.conversation === "thread" ? this.threadTs : undefined;
    if (this.options.conversation === "thread" && !thread) return [];
    return this.fake.botFiles(this.chatId, thread).map((f) => ({
      name: f.name,
      data: f.data,
      kind: f.mimetype.startsWith("image/") ? "image" : "file",
    }));
  }

  async lastDelivery(): Promise<"acked" | "refused"> {
    if (this.lastOk === undefined) throw new Error("nothing was delivered yet");
    return this.lastOk ? "acked" : "refused";
  }

  async redeliverLast(): Promise<void> {
    await this.fake.redeliverLast();
  }

  async click(label: string): Promise<void> {
    const result = await this.fake.click(label);
    if (!result.ok) throw new Error(`fake slack: click on "${label}" was not acked (${result.status ?? "socket"})`);
  }

  async botEcho(text: string): Promise<void> {
    await this.fake.botSays(text, { channel: this.chatId, ...(this.threadTs ? { threadTs: this.threadTs } : {}) });
  }

  botMessages(): VisibleMessage[] {
    return this.fake.botMessages(this.chatId, this.options.conversation === "thread" ? this.threadTs : undefined);
  }

  async close(): Promise<void> {
    await this.fake.close();
  }

  /** A thread the asker opens with a mention; everyone's follow-ups there need none. */
  readonly group: GroupDriver = ((): GroupDriver => {
    let thread: string | undefined;
    return {
      userId: (member) => MEMBERS[member],
      sharedThread: true,
      privateClickNotice: true,
      privateTextNotice: true,
      says: async (member, text) => {
        const user = MEMBERS[member];
        if (thread) await this.fake.say(text, { channel: TEAM_CHANNEL, user, threadTs: thread });
        else thread = await this.fake.mention(text, { channel: TEAM_CHANNEL, user });
      },
      click: async (member, label) => {
        const result = await this.fake.click(label, { user: MEMBERS[member] });
        if (!result.ok) throw new Error(`fake slack: click on "${label}" was not acked`);
      },
      botMessages: () => (thread ? this.fake.botMessages(TEAM_CHANNEL, thread) : []),
      shownOnlyTo: (member) => this.fake.ephemeralsSeenBy(MEMBERS[member], TEAM_CHANNEL),
    };
  })();
}
