/** The contract suite's view of the fake Feishu: a p2p chat with one user, over WS or webhook. */
import type { BotFile, ContractDriver, GroupDriver, GroupMember, UserFile, VisibleMessage } from "../../contract/driver.js";
import { type Delivery, DM_CHAT, FakeFeishu, GROUP_CHAT } from "./index.js";
import type { FakeMessage } from "./model.js";

/** Members of the group of the "who may answer" tests (open_ids). */
const MEMBERS: Record<GroupMember, string> = {
  asker: "ou_alice0000000000001",
  other: "ou_bob00000000000001",
  approver: "ou_carol000000000001",
};

export interface DriverOptions {
  mode: "websocket" | "webhook";
}

export class FeishuDriver implements ContractDriver {
  readonly channelName = "feishu";
  readonly minEditIntervalMs = 200;
  readonly streams = true;
  readonly buttons = true;
  /** Feishu's file and audio messages carry no text: a caption comes only with a photo (a post). */
  readonly fileCaptions = false;
  readonly webhook: boolean;
  /** The ack code (long connection) or HTTP status (webhook) the last user event got. */
  private lastCode: number | undefined;

  private constructor(
    readonly fake: FakeFeishu,
    private readonly mode: DriverOptions["mode"],
  ) {
    this.webhook = mode === "webhook";
  }

  static async start(options: DriverOptions): Promise<FeishuDriver> {
    const secrets =
      options.mode === "webhook" ? { encryptKey: "contract-encrypt-key", verificationToken: "contract-vtoken" } : {};
    const fake = await new FakeFeishu(secrets).start();
    fake.via = options.mode === "webhook" ? "webhook" : "ws";
    return new FeishuDriver(fake, options.mode);
  }

  channelConfig(env: { gatewayUrl: string }): Record<string, unknown> {
    const o = this.fake.options;
    this.fake.webhookTarget = `${env.gatewayUrl}/webhooks/${this.channelName}`;
    const config: Record<string, unknown> = {
      enabled: true,
      mode: this.mode,
      app_id: o.appId,
      app_secret: o.appSecret,
      api_base: this.fake.url,
    };
    if (o.encryptKey) config.encrypt_key = o.encryptKey;
    if (o.verificationToken) config.verification_token = o.verificationToken;
    return config;
  }

  async userSays(text: string): Promise<void> {
    const d = await this.fake.userSays({ text });
    this.lastCode = d.ack?.code ?? d.webhook?.status;
  }

  async lastDelivery(): Promise<"acked" | "refused"> {
    if (this.lastCode === undefined) throw new Error("nothing was delivered yet");
    return this.lastCode === 200 ? "acked" : "refused";
  }

  async redeliverLast(): Promise<void> {
    await this.fake.redeliver();
  }

  async click(label: string): Promise<void> {
    const d = await this.fake.click(label);
    assertAccepted(d.ack?.code ?? d.webhook?.status);
  }

  async botEcho(text: string): Promise<void> {
    await this.fake.userSays({ text, senderType: "app", userId: this.fake.options.botOpenId });
  }

  botMessages(): VisibleMessage[] {
    return this.fake.botMessages(DM_CHAT).map(visible);
  }

  /** The user sends a photo (with its caption), a document or a voice note in the p2p chat. */
  async userSendsFile(file: UserFile): Promise<void> {
    const d = await this.fake.userSendsFile({ ...file, chatId: DM_CHAT });
    this.lastCode = d.ack?.code ?? d.webhook?.status;
  }

  /** Image and file messages the bot posted in the p2p chat, with their stored bytes. */
  botFiles(): BotFile[] {
    return this.fake.botFiles(DM_CHAT).map(({ file, name }) => ({ name, data: new Uint8Array(file.data), kind: file.kind }));
  }

  /** A topic the asker opens with an @mention; follow-ups in it need none. Toasts reach only the clicker. */
  readonly group: GroupDriver = ((): GroupDriver => {
    let topic: string | undefined;
    const toasts: Array<{ member: GroupMember; text: string }> = [];
    return {
      userId: (member) => MEMBERS[member],
      sharedThread: true,
      privateClickNotice: true,
      privateTextNotice: false,
      says: async (member, text) => {
        const where = topic ? { rootId: topic } : { mentionBot: true };
        const d = await this.fake.userSays({ text, chatType: "group", chatId: GROUP_CHAT, userId: MEMBERS[member], ...where });
        assertAccepted(d.ack?.code ?? d.webhook?.status);
        topic ??= d.messageId;
      },
      click: async (member, label) => {
        const d = await this.fake.click(label, { userId: MEMBERS[member] });
        assertAccepted(d.ack?.code ?? d.webhook?.status);
        const text = toastOf(d);
        if (text) toasts.push({ member, text });
      },
      botMessages: () => (topic ? this.fake.botMessages(GROUP_CHAT, topic).map(visible) : []),
      shownOnlyTo: (member) => toasts.filter((t) => t.member === member).map((t) => t.text),
    };
  })();

  async close(): Promise<void> {
    await this.fake.close();
  }
}

function assertAccepted(code: number | undefined): void {
  if (code !== 200) throw new Error(`the app did not accept the event (answered ${String(code)})`);
}

function visible(m: FakeMessage): VisibleMessage {
  const v: VisibleMessage = { id: m.id, text: m.text, buttons: m.buttons.map((b) => b.label), versions: m.versions };
  if (m.inThread && m.rootId) v.threadId = m.rootId;
  return v;
}

/** The toast the app answered a card click with: Feishu shows it to the clicker alone. */
function toastOf(d: Delivery): string | undefined {
  const answer = d.answer as { toast?: { content?: unknown } } | undefined;
  return typeof answer?.toast?.content === "string" ? answer.toast.content : undefined;
}
