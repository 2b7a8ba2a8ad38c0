/**
 * The DingTalk channel: a robot in 1:1 chats and groups, over Stream mode (dingtalk-stream)
 * or HTTP callbacks. Replies stream into AI cards when a card template is configured, and are
 * otherwise sent once as markdown. See README.md for the conversation keys and choices.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { type DWClientDownStream, TOPIC_CARD, TOPIC_ROBOT } from "dingtalk-stream";
import { ChannelError } from "../../errors.js";
import type { Logger } from "../../log/logger.js";
import { HttpError, readBody, sendJson } from "../../server/http.js";
import { accessRulesFrom } from "../kit/access.js";
import { LifecycleChannel } from "../kit/lifecycle.js";
import { PlatformCalls } from "../kit/platform-call.js";
import { progressLines } from "../kit/progress.js";
import { RecentMap } from "../kit/recent.js";
import { mountWebhook } from "../kit/webhook-route.js";
import type {
  AccessRules,
  Channel,
  ChannelCapabilities,
  ChannelContext,
  ConversationRef,
  DownloadOptions,
  HttpMount,
  InboundAttachment,
  InboundMessage,
  InboundSink,
  MessageHandle,
  NativeStream,
  NativeStreamLimits,
  OutboundContent,
  OutboundFile,
  SendTarget,
} from "../types.js";
import { DingTalkApi } from "./api.js";
import { CardApi, FLOW } from "./card.js";
import { DINGTALK_RENAMES, DingTalkChannelConfig } from "./config.js";
import { downloadAttachment, MAX_UPLOAD_BYTES, sendFile } from "./files.js";
import { dingtalkEmitter } from "./format.js";
import { type CardCallback, cardClickToInbound, type RobotMessage, robotMessageToInbound } from "./inbound.js";
import { mapDingTalkError } from "./map-error.js";
import { sendMarkdown } from "./markdown-send.js";
import { CardStream } from "./stream.js";
import { resolveDingTalkTarget } from "./targets.js";
import { AntlerStreamClient } from "./transport.js";
import { robotMessageProblem, signatureProblem } from "./webhook-check.js";

export { DingTalkChannelConfig } from "./config.js";

/** Longest reply per message, in characters of DingTalk markdown (as converted): 15 KB of msgParam holds ~4,000 CJK characters. */
const MAX_TEXT = 4000;
/** Cards remembered for clicks (their conversation ref, with the sessionWebhook). */
const MAX_REMEMBERED_CARDS = 500;

export class DingTalkChannel extends LifecycleChannel implements Channel {
  static readonly configSchema = DingTalkChannelConfig;
  static readonly configRenames = DINGTALK_RENAMES;

  readonly capabilities: ChannelCapabilities;
  readonly access: AccessRules;
  readonly streamLimits?: NativeStreamLimits;
  readonly maxUploadBytes = MAX_UPLOAD_BYTES;
  private readonly config: DingTalkChannelConfig;
  private readonly logger: Logger;
  private readonly http: HttpMount;
  private api: DingTalkApi | undefined;
  private cards: CardApi | undefined;
  private client: AntlerStreamClient | undefined;
  private sink: InboundSink | undefined;
  /** Cards posted with buttons, for their clicks: the conversation ref, with the sessionWebhook. */
  private readonly cardRefs = new RecentMap<ConversationRef>(MAX_REMEMBERED_CARDS);
  private readonly calls = new PlatformCalls(this.name, mapDingTalkError, this.life);

  constructor(ctx: ChannelContext<DingTalkChannelConfig>) {
    const config = DingTalkChannelConfig.parse(ctx.config);
    super(ctx.name, config.mode, { exclusive: config.mode === "stream" });
    this.config = config;
    this.logger = ctx.logger;
    this.http = ctx.http;
    this.access = accessRulesFrom(this.config);
    const cards = Boolean(this.config.card_template_id);
    this.capabilities = {
      maxTextLength: MAX_TEXT,
      minEditIntervalMs: this.config.edit_interval_ms,
      edits: cards,
      // Clicks come back only over the stream connection (HTTP mode would need a registered callback route).
      buttons: cards && Boolean(this.config.card_buttons_key) && this.config.mode === "stream",
      threads: false,
      markdown: dingtalkEmitter,
      // Only a template with a progress variable can show the view beside the text (progress.ts).
      progressView: this.progressOn,
    };
    if (cards) this.streamLimits = { maxTextLength: MAX_TEXT, maxDurationMs: 30 * 60_000 };
  }

  /** Connects the stream (or mounts the callback route); a stop meanwhile aborts `signal`. */
  protected async open(sink: InboundSink, signal: AbortSignal): Promise<void> {
    this.sink = sink;
    this.api = this.makeApi();
    this.cards = this.makeCards(this.api);
    if (this.config.mode === "webhook") this.mountCallback();
    else await this.connectStream(signal);
  }

  /** Closes the stream; replies still go out through the API and the session webhooks. */
  protected override async closeIntake(): Promise<void> {
    this.client?.stop();
    this.client = undefined;
  }

  /** Closes the stream and takes the route down; safe to call more than once. */
  protected async close(): Promise<void> {
    await this.closeIntake();
    this.http.unroute();
    this.sink = undefined;
  }

  async check(): Promise<string> {
    const api = this.api ?? this.makeApi();
    await api.accessToken();
    const cards = this.config.card_template_id ? ", AI cards" : ", markdown replies";
    return `access token issued for client ${this.config.client_id} (${this.config.mode} mode${cards})`;
  }

  async send(ref: ConversationRef, content: OutboundContent): Promise<MessageHandle> {
    return this.calls.run("send", async () => {
      const cards = this.cards;
      const space = cards?.openSpaceId(ref);
      if (cards && space) {
        const params = cards.params(ref, content.text, FLOW.finished, content);
        const id = await cards.create(ref, space, params);
        if (content.buttons?.length) this.cardRefs.set(id, ref);
        return { id, ref, extra: { card: true } };
      }
      // No card to hold the view: its lines go under the text.
      const text = [content.text, this.progressOn ? progressLines(content.progress) : ""].filter(Boolean).join("\n\n");
      const id = await sendMarkdown(this.senderOptions(), ref, text);
      return { id, ref, extra: { card: false } };
    });
  }

  /** A group (openConversationId) or a person (staff id); needs `corp_id` or `target.workspace`. See targets.ts. */
  async resolveTarget(target: SendTarget): Promise<ConversationRef> {
    const settings = { channel: this.name, corpId: this.config.corp_id, scope: this.config.session_scope };
    return resolveDingTalkTarget(settings, target);
  }

  async edit(handle: MessageHandle, content: OutboundContent): Promise<void> {
    const cards = this.cards;
    if (!cards || handle.extra?.card !== true) {
      throw new ChannelError(
        this.name,
        "not_supported",
        "DingTalk markdown messages cannot be edited (set card_template_id for cards)",
      );
    }
    await this.calls.run("card update", () =>
      cards.update(handle.id, cards.params(handle.ref, content.text, FLOW.finished, content)),
    );
  }

  /** Replies show the progress view themselves: cards, with a template variable for it. */
  private get progressOn(): boolean {
    return Boolean(this.config.card_template_id && this.config.card_progress_key);
  }

  async startStream(ref: ConversationRef): Promise<NativeStream | undefined> {
    const cards = this.cards;
    const space = cards?.openSpaceId(ref);
    if (!cards || !space) return undefined;
    const id = await this.calls.run("card create", () => cards.create(ref, space, cards.params(ref, "", FLOW.processing)));
    return new CardStream({ id, ref, extra: { card: true } }, cards, this.logger, this.calls);
  }

  async download(
    msg: InboundMessage,
    attachment: InboundAttachment,
    maxBytes: number,
    options?: DownloadOptions,
  ): Promise<Uint8Array> {
    const signal = options?.signal;
    return this.calls.run(
      "download",
      () => downloadAttachment(this.senderOptions(), msg.ref, attachment, maxBytes, signal),
      signal,
    );
  }

  async sendFile(ref: ConversationRef, file: OutboundFile): Promise<MessageHandle> {
    const id = await this.calls.run("file upload", () => sendFile(this.senderOptions(), ref, file));
    return { id, ref, extra: { card: false } };
  }

  private makeApi(): DingTalkApi {
    const { client_id: clientId, client_secret: clientSecret } = this.config;
    if (!clientId) throw this.missing("client_id", "DINGTALK_CLIENT_ID");
    if (!clientSecret) throw this.missing("client_secret", "DINGTALK_CLIENT_SECRET");
    return new DingTalkApi({
      channel: this.name,
      apiBase: this.config.api_base,
      oapiBase: this.config.oapi_base,
      clientId,
      clientSecret,
    });
  }

  private missing(key: string, env: string): ChannelError {
    return new ChannelError(
      this.name,
      "config_missing",
      `channels.${this.name}.${key} is required: set ${env} or write it in config.yaml`,
    );
  }

  private makeCards(api: DingTalkApi): CardApi | undefined {
    const templateId = this.config.card_template_id;
    if (!templateId) return undefined;
    return new CardApi(api, {
      templateId,
      contentKey: this.config.card_content_key,
      buttonsKey: this.capabilities.buttons ? this.config.card_buttons_key : undefined,
      progressKey: this.progressOn ? this.config.card_progress_key : undefined,
      robotCode: (ref) => this.robotCode(ref),
      streamCallbacks: this.config.mode === "stream",
    });
  }

  private robotCode(ref: ConversationRef): string {
    const fromMessage = ref.extra?.robotCode;
    return this.config.robot_code || (typeof fromMessage === "string" && fromMessage) || this.config.client_id || "";
  }

  private senderOptions() {
    if (!this.api) throw new ChannelError(this.name, "not_started", "the DingTalk channel is not running");
    return {
      channel: this.name,
      api: this.api,
      logger: this.logger,
      robotCode: (r: ConversationRef) => this.robotCode(r),
    };
  }

  private async connectStream(signal: AbortSignal): Promise<void> {
    const client = this.streamClient();
    this.client = client;
    await client.getEndpoint();
    if (signal.aborted) return;
    await client._connect();
  }

  /** A stream client subscribed to robot messages, and to card clicks when cards carry buttons. */
  private streamClient(): AntlerStreamClient {
    const topics = [TOPIC_ROBOT, ...(this.capabilities.buttons ? [TOPIC_CARD] : [])];
    const client = new AntlerStreamClient({
      channel: this.name,
      clientId: this.config.client_id as string,
      clientSecret: this.config.client_secret as string,
      gatewayUrl: this.config.gateway_url,
      topics,
      onConnection: (up) => {
        if (up) this.life.connected();
        else this.life.degraded("the stream connection dropped; reconnecting");
      },
    });
    client.registerCallbackListener(TOPIC_ROBOT, (frame) => void this.onFrame(frame, (data) => this.fromRobot(data)));
    if (this.capabilities.buttons) {
      client.registerCallbackListener(TOPIC_CARD, (frame) => void this.onFrame(frame, (data) => this.fromCard(frame, data)));
    }
    return client;
  }

  /** Hands one CALLBACK frame to the core, then acks it; a frame the core could not take stays unacked. */
  private async onFrame(frame: DWClientDownStream, translate: (data: unknown) => InboundMessage | undefined) {
    const messageId = frame.headers.messageId;
    let inbound: InboundMessage | undefined;
    try {
      inbound = translate(JSON.parse(frame.data));
    } catch (err) {
      this.logger.warn({ err, messageId }, "dingtalk frame could not be read; acking it");
    }
    if (inbound) {
      const sink = this.sink;
      if (!sink) return;
      try {
        await sink(inbound);
      } catch (err) {
        this.logger.error({ err, messageId }, "dingtalk message not recorded; DingTalk will redeliver it");
        return;
      }
    }
    try {
      this.client?.socketCallBackResponse(messageId, {});
    } catch (err) {
      // The socket is reconnecting; DingTalk resends the frame and the core drops the duplicate.
      this.logger.warn({ err, messageId }, "dingtalk ack not sent");
    }
  }

  private fromRobot(data: unknown): InboundMessage | undefined {
    const problem = robotMessageProblem(data);
    if (problem) {
      this.logger.debug({ problem }, "dingtalk robot message ignored");
      return undefined;
    }
    const inbound = robotMessageToInbound(this.name, this.config.session_scope, data as RobotMessage);
    if (!inbound) this.logger.debug({ msgtype: (data as RobotMessage).msgtype }, "dingtalk message type ignored");
    return inbound;
  }

  private fromCard(frame: DWClientDownStream, data: unknown): InboundMessage | undefined {
    const click = data as CardCallback;
    const known = click.outTrackId ? this.cardRefs.get(click.outTrackId) : undefined;
    return cardClickToInbound(this.name, `card:${frame.headers.messageId}`, click, known);
  }

  /** `/webhooks/<name>`, and the paths of older versions: `/dingtalk/<name>/callback` and `callback_path`. */
  private mountCallback(): void {
    const aliases = [`/dingtalk/${this.name}/callback`, this.config.callback_path];
    mountWebhook(this.http, this.name, (req, res) => this.onCallback(req, res), aliases);
  }

  /**
   * One HTTP callback. Refusals are thrown as HttpError (the server answers and logs them,
   * rate-limited): input that will not get better on a retry gets 4xx, never 500, since DingTalk
   * retries a 500. Only a sink failure answers 500, so that the message is delivered again.
   */
  private async onCallback(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const header = (name: string) => {
      const v = req.headers[name];
      return Array.isArray(v) ? v[0] : v;
    };
    // The shared reader answers 413 over server.max_body_bytes before anything else is checked.
    const raw = (await readBody(req)).toString("utf8");
    const problem = signatureProblem(this.config.client_secret as string, header("timestamp"), header("sign"));
    if (problem) throw new HttpError(401, problem);
    let body: unknown;
    try {
      body = JSON.parse(raw);
    } catch {
      throw new HttpError(400, "body is not JSON");
    }
    const shape = robotMessageProblem(body);
    if (shape) throw new HttpError(400, `not a robot message: ${shape}`);
    const inbound = this.fromRobot(body);
    if (inbound && this.sink) await this.sink(inbound);
    sendJson(res, 200, {});
  }
}
