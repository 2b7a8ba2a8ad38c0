/**
 * A fake Discord on 127.0.0.1 for tests (see PLATFORMS.md "Discord"): one HTTP server serves the
 * REST API under `/api/v10` and the Gateway WebSocket, so the real discord.js logs in to it with
 * `rest: { api: fake.apiBase }`. One guild ("general", "random", forum "help") and DMs. Tests act
 * as users through the methods below (users.ts), including files and voice messages, and read
 * what each user saw; the same server is the CDN that serves attachments (files.ts). Faults cover
 * rate limits, failing calls, dropped and invalidated Gateway sessions, a revoked token,
 * expired attachment links and CDN downloads that never answer or stall mid-body (`cdn.stalls`).
 * Sending first: a create with `enforce_nonce` repeats no message within a few minutes (the first
 * comes back), and a user may close their DMs (`closeDms`: a send there gets 50007).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { closeServer } from "../../../src/server/http.js";
import { Events, type UserEvent } from "./events.js";
import { Cdn, type UserUpload } from "./files.js";
import { Gateway, Intent } from "./gateway.js";
import { bucketKey, findRoute, readBody, reply } from "./http.js";
import { type CallbackRecord, Interactions } from "./interactions.js";
import { readMarkdown } from "./markdown.js";
import { type ChannelCore, channelRoutes, type Route } from "./messages.js";
import { type CallMatch, type RateLimitOptions, RateLimits, type RestCall } from "./rate-limits.js";
import { type SayOptions, UserPosts, type VoiceOptions } from "./users.js";
import { buttonLabels, DiscordApiError, findButton } from "./validate.js";
import { ChannelKind, type FakeChannel, type FakeUser, type Json, type StoredMessage, userJson, World } from "./world.js";

export type { CdnFetch, StoredAttachment, UserUpload } from "./files.js";
export { UPLOAD_LIMIT } from "./files.js";
export type { CallMatch, RestCall } from "./rate-limits.js";
export type { SayOptions, VoiceOptions } from "./users.js";
export type { FakeChannel, FakeUser, Json, StoredMessage } from "./world.js";
export { Intent };

export const GUILD_ID = "1180000000000000001";
export const CHANNELS = { general: "1180000000000000010", random: "1180000000000000011", help: "1180000000000000012" };
export const BOT_USER: FakeUser = { id: "1180000000000000100", username: "antler", globalName: "Antler", bot: true };
export const ALICE: FakeUser = { id: "1180000000000000201", username: "alice", globalName: "Alice" };
export const BOB: FakeUser = { id: "1180000000000000202", username: "bob", globalName: "Bob" };
export const CAROL: FakeUser = { id: "1180000000000000203", username: "carol", globalName: "Carol" };
export const OTHER_BOT: FakeUser = { id: "1180000000000000299", username: "other_helper", globalName: "Other", bot: true };

export interface FakeOptions {
  token?: string;
  /** The app's privileged intents toggles (MessageContent and the rest) are on (default true). */
  privilegedIntents?: boolean;
  heartbeatIntervalMs?: number;
  /** Time to answer an interaction (Discord: 3 s). */
  interactionTokenTtlMs?: number;
  /** Time the interaction's webhook (`@original`, follow-ups) works (Discord: 15 min). */
  webhookTtlMs?: number;
  rateLimits?: RateLimitOptions;
}

/** One message as the fake shows it: raw content, the text a person reads, and every version seen. */
export interface MessageView {
  id: string;
  channelId: string;
  author: FakeUser;
  content: string;
  text: string;
  components: Json[];
  buttons: string[];
  versions: Array<{ content: string; text: string; at: number }>;
  /** Files posted with it, with their bytes as the CDN serves them. */
  files: FileView[];
  deleted: boolean;
  referenceId?: string;
  /** Set when the message is in a thread. */
  threadId?: string;
  injected: boolean;
}

export interface FileView {
  id: string;
  name: string;
  contentType?: string;
  size: number;
  data: Uint8Array;
}

export class FakeDiscord implements ChannelCore {
  readonly token: string;
  readonly applicationId = BOT_USER.id;
  readonly privilegedIntents: boolean;
  readonly world: World;
  readonly gateway: Gateway;
  readonly events: Events;
  readonly interactions: Interactions;
  readonly cdn: Cdn;
  readonly users: UserPosts;
  readonly limits: RateLimits;
  readonly calls: RestCall[] = [];
  readonly typings: Array<{ channelId: string; at: number }> = [];
  readonly commands = new Map<string, Json[]>();
  private readonly routes: Route[];
  private server: Server | undefined;
  private port = 0;
  private tokenRevoked = false;

  private constructor(readonly options: FakeOptions) {
    this.token = options.token ?? "MTE4MDAwMDAwMDAwMDAwMDEwMA.fake.discord-token_for-tests";
    this.privilegedIntents = options.privilegedIntents ?? true;
    this.world = new World(
      BOT_USER,
      { id: GUILD_ID, name: "Antler Test Server" },
      [
        { id: CHANNELS.general, name: "general", type: ChannelKind.GuildText },
        { id: CHANNELS.random, name: "random", type: ChannelKind.GuildText },
        { id: CHANNELS.help, name: "help", type: ChannelKind.GuildForum },
      ],
      [ALICE, BOB, CAROL, OTHER_BOT],
    );
    const fake = this;
    this.gateway = new Gateway({
      get token() {
        return fake.token;
      },
      get revoked() {
        return fake.tokenRevoked;
      },
      privilegedIntents: this.privilegedIntents,
      heartbeatIntervalMs: options.heartbeatIntervalMs ?? 5000,
      get resumeUrl() {
        return `${fake.gatewayUrl}/resume`;
      },
      ready: () => this.readyPayload(),
      afterReady: (intents) => ((intents & Intent.Guilds) !== 0 ? [{ t: "GUILD_CREATE", d: this.world.guildJson() }] : []),
    });
    this.events = new Events(this.world, this.gateway);
    this.cdn = new Cdn(() => `http://127.0.0.1:${this.port}`);
    this.world.links = this.cdn;
    this.users = new UserPosts(this.world, this.events, this.cdn);
    this.interactions = new Interactions(this, {
      tokenTtlMs: options.interactionTokenTtlMs ?? 3000,
      webhookTtlMs: options.webhookTtlMs ?? 15 * 60_000,
    });
    this.limits = new RateLimits(options.rateLimits);
    this.routes = [...channelRoutes(this), ...this.interactions.routes()];
  }

  static async start(options: FakeOptions = {}): Promise<FakeDiscord> {
    const fake = new FakeDiscord(options);
    const server = createServer((req, res) => void fake.handle(req, res));
    server.on("upgrade", (req, socket, head) => fake.gateway.upgrade(req, socket, head));
    fake.server = server;
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    fake.port = (server.address() as AddressInfo).port;
    return fake;
  }

  /** What discord.js takes as `rest.api` (it appends `/v10`). */
  get apiBase(): string {
    return `http://127.0.0.1:${this.port}/api`;
  }

  get gatewayUrl(): string {
    return `ws://127.0.0.1:${this.port}`;
  }

  get bot(): FakeUser {
    return BOT_USER;
  }

  get identifies(): number {
    return this.gateway.identifies;
  }

  get resumes(): number {
    return this.gateway.resumes;
  }

  async close(): Promise<void> {
    this.gateway.close();
    const server = this.server;
    this.server = undefined;
    if (server) await closeServer(server);
  }

  private readyPayload(): Json {
    return {
      v: 10,
      user: { ...userJson(BOT_USER), verified: true, mfa_enabled: false, flags: 0 },
      user_settings: {},
      guilds: [{ id: GUILD_ID, unavailable: true }],
      session_type: "normal",
      shard: [0, 1],
      application: { id: this.applicationId, flags: this.privilegedIntents ? 1 << 19 : 0 },
      private_channels: [],
      relationships: [],
      presences: [],
      geo_ordered_rtc_regions: ["fake"],
      _trace: ['["antler-fake-gateway"]'],
    };
  }

  // ---- the users' side ----

  /** `user` writes `text` to the bot in their DM. */
  dm(user: FakeUser, text: string): StoredMessage {
    return this.users.dm(user, text);
  }

  /** `user` writes in a guild text channel or a thread. */
  say(channelId: string, user: FakeUser, text: string, options: SayOptions = {}): StoredMessage {
    return this.users.say(channelId, user, text, options);
  }

  /** `user` opens a post in the forum "help": THREAD_CREATE, then its starter message. */
  forumPost(user: FakeUser, title: string, text: string, options: { mention?: boolean } = {}): StoredMessage {
    return this.users.forumPost(user, title, text, options);
  }

  /**
   * `user` sends files, with `caption` as the message's text, in their DM or in `options.channelId`
   * (a guild text channel or thread). `mention` puts the bot's mention before the caption.
   */
  sendFiles(user: FakeUser, files: UserUpload[], caption = "", options: SayOptions & { channelId?: string } = {}): StoredMessage {
    return this.users.sendFiles(user, files, caption, options);
  }

  /**
   * `user` records a voice message: one Ogg Opus file, flagged as a voice message (1 << 13), with
   * a duration and waveform and no text (Discord allows nothing else in it).
   */
  sendVoice(user: FakeUser, data: Uint8Array, options: VoiceOptions = {}): StoredMessage {
    return this.users.sendVoice(user, data, options);
  }

  /** A message by the bot itself that did not come from its REST calls (another process of it). */
  botSays(channelId: string, text: string): StoredMessage {
    const channel = this.world.channels.get(channelId) as FakeChannel;
    const m = this.world.add({
      channelId,
      ...(channel.guildId ? { guildId: channel.guildId } : {}),
      author: BOT_USER,
      content: text,
      components: [],
      type: 0,
      flags: 0,
      mentions: [],
      injected: true,
    });
    this.events.message("MESSAGE_CREATE", m, true);
    return m;
  }

  /** `user` clicks the button labelled `label` on a message. */
  click(messageId: string, label: string, user: FakeUser): UserEvent {
    const m = this.world.messages.get(messageId);
    const button = m && !m.deleted ? findButton(m.components, label) : undefined;
    if (!m || !button) throw new Error(`fake discord: message ${messageId} shows no button "${label}"`);
    if (m.ephemeralFor && m.ephemeralFor !== user.id)
      throw new Error(`fake discord: ${user.username} cannot see message ${messageId}`);
    return this.events.interaction(this.interactions.click(m, button, user));
  }

  /** `user` runs the registered slash command `/name` in a channel. */
  slash(channelId: string, user: FakeUser, name: string): UserEvent {
    const channel = this.world.channels.get(channelId);
    if (!channel) throw new Error(`fake discord: no channel ${channelId}`);
    const scopes = channel.guildId ? [channel.guildId, "global"] : ["global"];
    const command = scopes.flatMap((s) => this.commands.get(s) ?? []).find((c) => c.name === name);
    if (!command) throw new Error(`fake discord: no command /${name} is registered where ${user.username} can use it`);
    return this.events.interaction(this.interactions.slash(channel, user, command));
  }

  /** The last user event again, same payload, a new `s` (as a replay after a resume would carry). */
  redeliverLast(): UserEvent {
    const last = this.events.userEvents.at(-1);
    if (!last) throw new Error("fake discord: no user event yet");
    this.events.redeliver(last);
    return last;
  }

  // ---- reading what users saw ----

  messagesIn(channelId: string): MessageView[] {
    return this.world.in(channelId).map((m) => this.view(m));
  }

  message(id: string): MessageView | undefined {
    const m = this.world.messages.get(id);
    return m ? this.view(m) : undefined;
  }

  /** Threads created so far (by the bot or as forum posts). */
  threads(): Array<{ id: string; parentId: string; name: string; ownerId: string }> {
    return this.world
      .threads()
      .map((t) => ({ id: t.id, parentId: t.parentId ?? "", name: t.name ?? "", ownerId: t.ownerId ?? "" }));
  }

  /** Texts that only `userId` saw (ephemeral interaction answers), oldest first. */
  ephemeralFor(userId: string): string[] {
    return this.interactions.ephemeralContents(userId).map((c) => this.read(c));
  }

  /** The user's privacy settings refuse DMs from the bot: opening the DM works, sending to it gets 50007. */
  closeDms(user: FakeUser): void {
    this.world.closedDms.add(user.id);
  }

  dmChannelOf(user: FakeUser): string {
    return this.world.dmWith(user).id;
  }

  get interactionCallbacks(): CallbackRecord[] {
    return this.interactions.callbacks;
  }

  /** Calls made while a 429 told the client to wait. */
  earlyCalls(): RestCall[] {
    return [...this.limits.early];
  }

  /** The text a person reads for `content`. */
  read(content: string): string {
    return readMarkdown(content, {
      userName: (id) => {
        const u = this.world.users.get(id);
        return u ? (u.globalName ?? u.username) : undefined;
      },
      channelName: (id) => this.world.channels.get(id)?.name,
    });
  }

  private view(m: StoredMessage): MessageView {
    return {
      id: m.id,
      channelId: m.channelId,
      author: m.author,
      content: m.content,
      text: this.read(m.content),
      components: m.components,
      buttons: buttonLabels(m.components),
      versions: m.versions.map((v) => ({ content: v.content, text: this.read(v.content), at: v.at })),
      files: (m.attachments ?? []).map((a) => ({
        id: a.id,
        name: a.filename,
        ...(a.contentType ? { contentType: a.contentType } : {}),
        size: a.size,
        data: a.data,
      })),
      deleted: m.deleted,
      ...(m.referenceId ? { referenceId: m.referenceId } : {}),
      ...(this.world.channels.get(m.channelId)?.type === ChannelKind.PublicThread ? { threadId: m.channelId } : {}),
      injected: m.injected === true,
    };
  }

  // ---- faults ----

  /** Every attachment link handed out so far stops working, as Discord's do after about a day. */
  expireAttachmentLinks(): void {
    this.cdn.expireLinks();
  }

  /** The next matching call gets 429; `global` holds every call, not just the route's bucket. */
  rateLimitNext(match: CallMatch, retryAfterMs: number, options: { global?: boolean } = {}): void {
    this.limits.forceNext(match, retryAfterMs, options.global ?? false);
  }

  /** The next `times` matching calls get `status` with Discord error `code` (default 0). */
  failNext(match: CallMatch, status: number, code = 0, times = 1): void {
    const message = status >= 500 ? `${status}: Internal Server Error` : `${status}: Error`;
    this.limits.failNext(match, status, code, message, times);
  }

  dropConnection(): void {
    this.gateway.dropConnection();
  }

  requestReconnect(): void {
    this.gateway.requestReconnect();
  }

  invalidSession(resumable: boolean): void {
    this.gateway.invalidSession(resumable);
  }

  /** The token was reset in the Developer Portal: REST answers 401, the Gateway closes with 4004. */
  revokeToken(): void {
    this.tokenRevoked = true;
    this.gateway.revoke();
  }

  // ---- HTTP ----

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://x");
    const { body, parts } = await readBody(req);
    const method = (req.method ?? "GET").toUpperCase();
    // The CDN: attachment links need no token, only a valid signature.
    if (method === "GET" && this.cdn.serve(url.pathname, url.searchParams, res)) return;
    const path = url.pathname.replace(/^\/api\/v10(?=\/)/, "");
    const found = path === url.pathname ? undefined : findRoute(this.routes, method, path);
    if (!found) return reply(res, 404, { message: "404: Not Found", code: 0 });
    const { route, params } = found;
    const call: RestCall = {
      method,
      path,
      route: route.path,
      status: 200,
      at: Date.now(),
      ...(body !== undefined ? { body } : {}),
    };
    if (route.auth && (req.headers.authorization !== `Bot ${this.token}` || this.tokenRevoked)) {
      call.status = 401;
      this.calls.push(call);
      return reply(res, 401, { message: "401: Unauthorized", code: 0 });
    }
    this.calls.push(call);
    const verdict = this.limits.admit(call, bucketKey(route, params, method), route.auth);
    if (verdict.refusal) {
      call.status = 429;
      return reply(res, 429, verdict.refusal.body, verdict.headers);
    }
    try {
      const failure = this.limits.failure(method, path);
      if (failure) throw failure;
      const result = route.run({ params, body: (body ?? {}) as Json, query: url.searchParams, parts });
      call.status = result.status;
      reply(res, result.status, result.body, verdict.headers);
    } catch (err) {
      const e = err instanceof DiscordApiError ? err : new DiscordApiError(500, 0, `500: ${(err as Error).message}`);
      call.status = e.status;
      call.code = e.code;
      reply(res, e.status, e.body, verdict.headers);
    }
  }
}
