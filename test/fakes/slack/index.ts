/**
 * A fake Slack for tests, on 127.0.0.1: the Web API (see web-api.ts), files (files.ts), Socket
 * Mode or signed Events API delivery (see transport.ts; over several URLs with Slack's retries,
 * see http-delivery.ts), and a user-side API — mention the bot, write in a thread, DM it, share
 * a file, click a button — plus what each conversation shows, and who the bot may reach
 * (workspace.ts: members, channels it is in, DMs opened by conversations.open). File URLs can be made to never
 * answer or stall mid-body (`files.stalls`).
 */

import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { closeServer } from "../../../src/server/http.js";
import type { FakeTask } from "./chunks.js";
import { type FakeFile, FakeFiles } from "./files.js";
import { type Delivered, type DeliveryFault, HttpDelivery, type HttpDeliveryOptions } from "./http-delivery.js";
import { type DeliveryResult, type EnvelopeType, FakeSocketServer, postSigned, type SignedPostOptions } from "./transport.js";
import { buttonLabels, type FakeMessage, FakeWebApi, type Json, visibleText } from "./web-api.js";
import type { FakeWorkspace } from "./workspace.js";

export type { FakeFile } from "./files.js";
export { SLACK_FILE_MAX_BYTES } from "./files.js";
export type { DeliveryFault, HttpDeliveryOptions } from "./http-delivery.js";
export type { DeliveryResult } from "./transport.js";
export { slackSignature } from "./transport.js";
export type { FakeMessage } from "./web-api.js";
export { buttonLabels, mrkdwnToPlain, visibleText } from "./web-api.js";

export interface FakeSlackOptions {
  mode: "socket" | "webhook";
  botToken?: string;
  appToken?: string;
  signingSecret?: string;
  teamId?: string;
  botUserId?: string;
  botId?: string;
  streamExpiryMs?: number;
  /** Also send the `message` event that accompanies every `app_mention` (Slack does, with message.channels). */
  companionMessages?: boolean;
  /** HTTP mode: how tries are spread over `eventsUrls` and whether events are retried (http-delivery.ts). */
  http?: HttpDeliveryOptions;
}

export interface VisibleBotMessage {
  id: string;
  text: string;
  buttons: string[];
  versions: Array<{ text: string; tasks?: string[]; at: number }>;
  threadId?: string;
  streaming: boolean;
  /** A stream's task cards (chunks.ts), when it has any. */
  tasks?: FakeTask[];
}

/** A file a user shares: a photo, a document, or a voice clip recorded in Slack (`voice`). */
export interface UserUpload {
  name: string;
  mime: string;
  data: Uint8Array;
  voice?: boolean;
}

/** A file the bot shared, as a member of the conversation downloads it. */
export interface VisibleBotFile {
  id: string;
  name: string;
  mimetype: string;
  data: Uint8Array;
  threadId?: string;
}

export class FakeSlack {
  readonly api: FakeWebApi;
  readonly files: FakeFiles;
  readonly socket = new FakeSocketServer();
  readonly botToken: string;
  readonly appToken: string;
  readonly signingSecret: string;
  readonly teamId: string;
  readonly botUserId: string;
  readonly botId: string;
  /** Where HTTP mode posts events; set by the test once Antler's server listens. */
  eventsUrl = "";
  /** HTTP mode behind several URLs (one per replica): when set, tries are spread over these instead. */
  eventsUrls: string[] = [];
  /** Every try of every delivery, oldest first; HTTP tries say which URL got them. */
  readonly deliveries: DeliveryResult[] = [];
  private readonly http: HttpDelivery;
  private readonly server: Server;
  private readonly clientServers = new Map<string, Server>();
  private port = 0;
  private eventCounter = 0;
  private last: Delivered | undefined;

  private constructor(readonly options: FakeSlackOptions) {
    this.botToken = options.botToken ?? "xoxb-fake-bot-token";
    this.appToken = options.appToken ?? "xapp-fake-app-token";
    this.signingSecret = options.signingSecret ?? "fake-signing-secret";
    this.teamId = options.teamId ?? "T0001";
    this.botUserId = options.botUserId ?? "UBOT";
    this.botId = options.botId ?? "BBOT";
    this.api = new FakeWebApi({
      botToken: this.botToken,
      appToken: this.appToken,
      teamId: this.teamId,
      botUserId: this.botUserId,
      botId: this.botId,
      ...(options.streamExpiryMs !== undefined ? { streamExpiryMs: options.streamExpiryMs } : {}),
    });
    this.files = new FakeFiles({
      teamId: this.teamId,
      botUserId: this.botUserId,
      botToken: this.botToken,
      baseUrl: () => `http://127.0.0.1:${this.port}`,
      postable: (channel) => this.api.workspace.postable(channel),
    });
    this.api.register(this.files.handlers());
    this.http = new HttpDelivery(
      () => (this.eventsUrls.length > 0 ? this.eventsUrls : [this.eventsUrl]),
      this.signingSecret,
      options.http ?? {},
    );
    this.api.socketUrl = () => `ws://127.0.0.1:${this.port}/link/?ticket=${this.socket.connections + 1}`;
    this.server = createServer((req, res) => this.route(req, res, "main"));
    this.server.on("upgrade", (req, sock, head) => {
      if (req.url?.startsWith("/link")) this.socket.handleUpgrade(req, sock, head);
      else sock.destroy();
    });
  }

  static async start(options: FakeSlackOptions): Promise<FakeSlack> {
    const fake = new FakeSlack(options);
    await new Promise<void>((resolve) => fake.server.listen(0, "127.0.0.1", resolve));
    fake.port = (fake.server.address() as AddressInfo).port;
    return fake;
  }

  /** `api_base` for the adapter (trailing slash included). */
  get apiUrl(): string {
    return `http://127.0.0.1:${this.port}/api/`;
  }

  /**
   * An `api_base` of its own for one app process (e.g. one gateway replica): the same workspace,
   * but Web API calls that come through it are recorded with `client` set to `name`.
   */
  async listenFor(name: string): Promise<string> {
    let server = this.clientServers.get(name);
    if (!server) {
      server = createServer((req, res) => this.route(req, res, name));
      this.clientServers.set(name, server);
      await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
    }
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/`;
  }

  private route(req: IncomingMessage, res: ServerResponse, client: string): void {
    const url = new URL(req.url ?? "/", "http://x");
    const m = /^\/api\/([\w.]+)$/.exec(url.pathname);
    if (req.method === "POST" && m?.[1]) void this.api.handle(req, res, m[1], client);
    else if (url.pathname.startsWith("/files-pri/")) this.files.serveFile(req, res, url.pathname);
    else if (url.pathname.startsWith("/upload/v1/")) void this.files.receiveUpload(req, res, url.pathname);
    else res.writeHead(404).end();
  }

  /** A user mentions the bot in a channel (top level, or in `threadTs`). Returns the message ts. */
  async mention(text: string, o: { channel?: string; user?: string; threadTs?: string } = {}): Promise<string> {
    const channel = o.channel ?? "C0001";
    const user = o.user ?? "U0001";
    const full = text.includes(`<@${this.botUserId}>`) ? text : `<@${this.botUserId}> ${text}`;
    const m = this.api.addUserMessage(channel, user, full, o.threadTs);
    const base = { user, text: full, ts: m.ts, channel, team: this.teamId, ...(o.threadTs ? { thread_ts: o.threadTs } : {}) };
    await this.deliverEvent({ type: "app_mention", ...base, event_ts: m.ts });
    if (this.options.companionMessages !== false) {
      const saved = this.last;
      await this.deliverEvent({ type: "message", channel_type: "channel", ...base, event_ts: m.ts });
      this.last = saved;
    }
    return m.ts;
  }

  /** A user writes in a channel (no mention), e.g. a follow-up in a thread. */
  async say(text: string, o: { channel?: string; user?: string; threadTs?: string } = {}): Promise<string> {
    const channel = o.channel ?? "C0001";
    const user = o.user ?? "U0001";
    const m = this.api.addUserMessage(channel, user, text, o.threadTs);
    await this.deliverEvent({
      type: "message",
      channel_type: "channel",
      user,
      text,
      ts: m.ts,
      channel,
      team: this.teamId,
      event_ts: m.ts,
      ...(o.threadTs ? { thread_ts: o.threadTs, parent_user_id: user } : {}),
    });
    return m.ts;
  }

  /** A user DMs the bot. */
  async dm(text: string, o: { channel?: string; user?: string } = {}): Promise<string> {
    const channel = o.channel ?? "D0001";
    const user = o.user ?? "U0001";
    const m = this.api.addUserMessage(channel, user, text);
    await this.deliverEvent({
      type: "message",
      channel_type: "im",
      user,
      text,
      ts: m.ts,
      channel,
      team: this.teamId,
      event_ts: m.ts,
    });
    return m.ts;
  }

  /**
   * A user shares a file, with `caption` as the message text: a `file_share` message event whose
   * `files` Slack fills. With `mention` (channels only) the caption mentions the bot and an
   * `app_mention` carrying the same files comes first, as Slack sends it. Returns the message ts.
   */
  async shareFile(
    upload: UserUpload,
    o: { channel?: string; user?: string; threadTs?: string; caption?: string; mention?: boolean } = {},
  ): Promise<string> {
    const channel = o.channel ?? "C0001";
    const user = o.user ?? "U0001";
    const direct = channel.startsWith("D");
    const caption = o.caption ?? "";
    const text = o.mention && !direct ? `<@${this.botUserId}> ${caption}`.trimEnd() : caption;
    const file = this.files.addUserFile(upload, user, channel);
    const m = this.api.addUserMessage(channel, user, text, o.threadTs);
    if (o.threadTs) file.threadTs = o.threadTs;
    const base = {
      text,
      files: [this.files.describe(file)],
      upload: true,
      user,
      ts: m.ts,
      channel,
      team: this.teamId,
      event_ts: m.ts,
      ...(o.threadTs ? { thread_ts: o.threadTs, parent_user_id: user } : {}),
    };
    const message = { type: "message", subtype: "file_share", channel_type: direct ? "im" : "channel", ...base };
    if (!o.mention || direct) {
      await this.deliverEvent(message);
      return m.ts;
    }
    await this.deliverEvent({ type: "app_mention", ...base });
    if (this.options.companionMessages !== false) {
      const saved = this.last;
      await this.deliverEvent(message);
      this.last = saved;
    }
    return m.ts;
  }

  /** Files the bot shared in a channel (optionally one thread), oldest first, with their bytes. */
  botFiles(channel?: string, threadTs?: string): VisibleBotFile[] {
    return this.files.sharedByBot(channel, threadTs).map((f: FakeFile) => ({
      id: f.id,
      name: f.name,
      mimetype: f.mimetype,
      data: f.data,
      ...(f.threadTs ? { threadId: f.threadTs } : {}),
    }));
  }

  /** A bot message arrives as an event (this bot when `botId` is omitted). */
  async botSays(
    text: string,
    o: { channel?: string; channelType?: string; threadTs?: string; botId?: string } = {},
  ): Promise<void> {
    const channel = o.channel ?? "D0001";
    const ts = this.api.nextTs();
    await this.deliverEvent({
      type: "message",
      subtype: "bot_message",
      bot_id: o.botId ?? this.botId,
      ...(o.botId ? {} : { user: this.botUserId }),
      text,
      ts,
      channel,
      channel_type: o.channelType ?? (channel.startsWith("D") ? "im" : "channel"),
      event_ts: ts,
      ...(o.threadTs ? { thread_ts: o.threadTs } : {}),
    });
  }

  /** A user edits an earlier message: Slack sends `message_changed`. */
  async userEdits(channel: string, ts: string, text: string): Promise<void> {
    const now = this.api.nextTs();
    await this.deliverEvent({
      type: "message",
      subtype: "message_changed",
      channel,
      channel_type: channel.startsWith("D") ? "im" : "channel",
      ts: now,
      event_ts: now,
      message: { type: "message", user: "U0001", text, ts, edited: { user: "U0001", ts: now } },
      previous_message: { type: "message", user: "U0001", ts },
    });
  }

  /** A user clicks the button labelled `label` on the newest bot message showing it. */
  async click(label: string, o: { user?: string } = {}): Promise<DeliveryResult> {
    const m = [...this.api.messages].reverse().find((x) => x.byBot && buttonLabels(x).includes(label));
    if (!m) throw new Error(`fake slack: no message shows a button "${label}"`);
    const element = (m.blocks ?? [])
      .filter((b) => b.type === "actions")
      .flatMap((b) => (b.elements as Json[]).map((e) => ({ block: b, e })))
      .find(({ e }) => (e.text as Json).text === label);
    if (!element) throw new Error("unreachable");
    const user = o.user ?? "U0001";
    const actionTs = (Date.now() / 1000).toFixed(6);
    const payload: Json = {
      type: "block_actions",
      user: { id: user, username: "user", name: "user", team_id: this.teamId },
      api_app_id: "A0001",
      token: "legacy-verification-token",
      team: { id: this.teamId, domain: "fake" },
      trigger_id: `trigger-${actionTs}`,
      response_url: `http://127.0.0.1:${this.port}/actions/response`,
      container: { type: "message", message_ts: m.ts, channel_id: m.channel, is_ephemeral: false, ...threadOf(m) },
      channel: { id: m.channel, name: m.channel.startsWith("D") ? "directmessage" : "general" },
      message: { type: "message", ts: m.ts, text: m.text, user: this.botUserId, bot_id: this.botId, ...threadOf(m) },
      actions: [
        {
          type: "button",
          block_id: element.block.block_id,
          action_id: element.e.action_id,
          value: element.e.value,
          text: element.e.text,
          action_ts: actionTs,
        },
      ],
    };
    return this.deliver("interactive", payload);
  }

  /** Delivers the last user event again with the same event id (a Slack retry). */
  async redeliverLast(): Promise<DeliveryResult> {
    if (!this.last) throw new Error("fake slack: nothing delivered yet");
    this.last.retries += 1;
    return this.send(this.last);
  }

  /** Delivers a raw Events API body with extra signing options (HTTP mode). */
  async postRaw(payload: Json, o: Partial<SignedPostOptions> = {}, type: EnvelopeType = "events_api"): Promise<DeliveryResult> {
    return postSigned(this.eventsUrl, type, payload, { signingSecret: this.signingSecret, ...o });
  }

  /** Makes HTTP tries fail on purpose, so that Slack retries them (see http-delivery.ts). */
  injectDeliveryFault(fault: DeliveryFault): void {
    this.http.inject(fault);
  }

  /** Builds an `event_callback` envelope around `event`. */
  envelope(event: Json): Json {
    this.eventCounter += 1;
    // Slack sends events only from conversations that exist: the fake knows them from now on.
    if (typeof event.channel === "string" && typeof event.user === "string" && event.user !== this.botUserId) {
      this.api.workspace.sawMessage(event.channel, event.user);
    }
    return {
      token: "legacy-verification-token",
      team_id: this.teamId,
      api_app_id: "A0001",
      event,
      type: "event_callback",
      event_id: `Ev${String(this.eventCounter).padStart(6, "0")}`,
      event_time: Math.floor(Date.now() / 1000),
      authorizations: [{ team_id: this.teamId, user_id: this.botUserId, is_bot: true, is_enterprise_install: false }],
      is_ext_shared_channel: false,
    };
  }

  /** Bot messages in a channel (optionally one thread), oldest first, as users see them. */
  botMessages(channel?: string, threadTs?: string): VisibleBotMessage[] {
    return this.api.messages
      .filter((m) => m.byBot && (!channel || m.channel === channel) && (!threadTs || m.threadTs === threadTs))
      .map((m) => ({
        id: m.ts,
        text: visibleText(m),
        buttons: buttonLabels(m),
        versions: m.versions.map((v) => ({ text: v.text, ...(v.tasks ? { tasks: v.tasks } : {}), at: v.at })),
        ...(m.threadTs ? { threadId: m.threadTs } : {}),
        streaming: m.streaming,
        ...(m.tasks ? { tasks: m.tasks } : {}),
      }));
  }

  /** Texts of ephemeral messages shown to `user` (optionally in one channel), oldest first; no one else sees them. */
  ephemeralsSeenBy(user: string, channel?: string): string[] {
    return this.api.ephemerals.filter((e) => e.user === user && (!channel || e.channel === channel)).map((e) => e.text);
  }

  /** Members and conversations of the workspace: add people and channels, archive, remove the bot. */
  get workspace(): FakeWorkspace {
    return this.api.workspace;
  }

  calls(method: string): Json[] {
    return this.api.calls.filter((c) => c.method === method).map((c) => c.args);
  }

  async close(): Promise<void> {
    this.socket.close();
    for (const server of this.clientServers.values()) await closeServer(server);
    this.clientServers.clear();
    await closeServer(this.server);
  }

  private async deliverEvent(event: Json): Promise<DeliveryResult> {
    return this.deliver("events_api", this.envelope(event));
  }

  private async deliver(type: EnvelopeType, payload: Json): Promise<DeliveryResult> {
    this.last = { type, payload, retries: 0 };
    return this.send(this.last);
  }

  private async send(d: Delivered): Promise<DeliveryResult> {
    if (this.options.mode !== "socket") return this.http.deliver(d, (r) => this.deliveries.push(r));
    const result = await this.socket.deliver(d.type, d.payload, d.retries, d.retries ? "timeout" : "");
    this.deliveries.push(result);
    return result;
  }
}

function threadOf(m: FakeMessage): Json {
  return m.threadTs ? { thread_ts: m.threadTs } : {};
}
