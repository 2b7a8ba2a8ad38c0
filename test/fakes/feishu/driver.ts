/** The contract suite's view of the fake Feishu: a p2p chat with one user, over WS or webhook. */
import type { ContractDriver, VisibleMessage } from "../../contract/driver.js";
import { DM_CHAT, FeishuFake } from "./index.js";

export interface DriverOptions {
  mode: "websocket" | "webhook";
}

export class FeishuDriver implements ContractDriver {
  readonly channelName = "feishu";
  readonly minEditIntervalMs = 200;
  readonly streams = true;
  readonly buttons = true;

  private constructor(
    readonly fake: FeishuFake,
    private readonly mode: DriverOptions["mode"],
  ) {}

  static async start(options: DriverOptions): Promise<FeishuDriver> {
    const secrets =
      options.mode === "webhook" ? { encryptKey: "contract-encrypt-key", verificationToken: "contract-vtoken" } : {};
    const fake = await new FeishuFake(secrets).start();
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
      domain: this.fake.url,
    };
    if (o.encryptKey) config.encrypt_key = o.encryptKey;
    if (o.verificationToken) config.verification_token = o.verificationToken;
    return config;
  }

  async userSays(text: string): Promise<void> {
    const d = await this.fake.userSays({ text });
    assertAccepted(d.ack?.code ?? d.webhook?.status);
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
    return this.fake.botMessages(DM_CHAT).map((m) => {
      const v: VisibleMessage = { id: m.id, text: m.text, buttons: m.buttons.map((b) => b.label), versions: m.versions };
      if (m.inThread && m.rootId) v.threadId = m.rootId;
      return v;
    });
  }

  async close(): Promise<void> {
    await this.fake.close();
  }
}

function assertAccepted(code: number | undefined): void {
  if (code !== 200) throw new Error(`the app did not accept the event (answered ${String(code)})`);
}
