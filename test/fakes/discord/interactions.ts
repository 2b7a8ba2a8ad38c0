/**
 * Interactions: a button click (type 3) or a slash command (type 2) as the fake dispatches it, and
 * the routes that answer it. The first callback must come within the token's life (3 s on
 * Discord; later 10062) and only once (a second one 40060). Type 4 replies (flag 64: only the
 * clicker sees it), 5 defers a reply, 6 defers an update, 7 updates the clicked message. The
 * webhook routes (`@original`, follow-ups) work for 15 minutes after the interaction.
 */
import { type ChannelCore, editMessage, mentionsIn, type Route, type RouteRequest, type RouteResult } from "./messages.js";
import { assertNotEmpty, DiscordApiError, invalidForm, messageFields } from "./validate.js";
import { type FakeChannel, type FakeUser, type Json, type StoredMessage, snowflake, userJson } from "./world.js";

const EPHEMERAL = 1 << 6;
/** Permissions Discord reports the app has in the interaction's channel. */
const APP_PERMISSIONS = "2248473465835073";

export interface InteractionRecord {
  id: string;
  token: string;
  type: 2 | 3;
  user: FakeUser;
  channel: FakeChannel;
  createdAt: number;
  /** The message whose button was clicked. */
  message?: StoredMessage;
  ack?: { type: number; at: number };
  /** What `@original` refers to. */
  original?: StoredMessage;
  followUps: string[];
}

export interface CallbackRecord {
  interactionId: string;
  type: number;
  data?: Json;
  status: number;
  code?: number;
  at: number;
}

export interface InteractionOptions {
  tokenTtlMs: number;
  webhookTtlMs: number;
}

export class Interactions {
  readonly byId = new Map<string, InteractionRecord>();
  readonly callbacks: CallbackRecord[] = [];

  constructor(
    private readonly core: ChannelCore,
    private readonly options: InteractionOptions,
  ) {}

  /** The INTERACTION_CREATE payload of a click on `button` of `message` by `user`. */
  click(message: StoredMessage, button: Json, user: FakeUser): Json {
    const rec = this.open(3, user, this.channelOf(message), message);
    return {
      ...this.base(rec),
      data: { custom_id: button.custom_id, component_type: 2 },
      message: this.core.world.messageJson(message),
    };
  }

  /** The INTERACTION_CREATE payload of `/name` typed by `user` in `channel`. */
  slash(channel: FakeChannel, user: FakeUser, command: Json): Json {
    const rec = this.open(2, user, channel);
    const data = { id: command.id, name: command.name, type: command.type ?? 1, options: [] as Json[] };
    return { ...this.base(rec), data: command.guild_id ? { ...data, guild_id: command.guild_id } : data };
  }

  private channelOf(m: StoredMessage): FakeChannel {
    return this.core.world.channels.get(m.channelId) as FakeChannel;
  }

  private open(type: 2 | 3, user: FakeUser, channel: FakeChannel, message?: StoredMessage): InteractionRecord {
    const id = snowflake();
    const token = `aW50ZXJhY3Rpb246${id}:${Math.random().toString(36).slice(2, 14)}`;
    const rec: InteractionRecord = { id, token, type, user, channel, createdAt: Date.now(), followUps: [] };
    if (message) rec.message = message;
    this.byId.set(id, rec);
    return rec;
  }

  private base(rec: InteractionRecord): Json {
    const { world, applicationId } = this.core;
    const guildId = rec.channel.guildId;
    const who = guildId ? { guild_id: guildId, member: world.memberWithUser(rec.user) } : { user: userJson(rec.user) };
    return {
      id: rec.id,
      application_id: applicationId,
      type: rec.type,
      token: rec.token,
      version: 1,
      channel_id: rec.channel.id,
      channel: world.channelJson(rec.channel),
      ...who,
      app_permissions: APP_PERMISSIONS,
      locale: "en-US",
      ...(guildId ? { guild_locale: "en-US", guild: { id: guildId, locale: "en-US", features: [] } } : {}),
      entitlements: [],
      authorizing_integration_owners: { "0": guildId ?? "0" },
      context: guildId ? 0 : 1,
      attachment_size_limit: 10 * 1024 * 1024,
    };
  }

  routes(): Route[] {
    const r = (method: string, path: string, run: Route["run"]): Route => ({ method, path, auth: false, run });
    return [
      r("POST", "/interactions/:interaction/:token/callback", (req) => this.callback(req)),
      r("GET", "/webhooks/:app/:token/messages/@original", (req) =>
        this.withWebhook(req, (rec) => this.json(this.original(rec))),
      ),
      r("PATCH", "/webhooks/:app/:token/messages/@original", (req) =>
        this.withWebhook(req, (rec) => this.edit(this.original(rec), req.body)),
      ),
      r("DELETE", "/webhooks/:app/:token/messages/@original", (req) =>
        this.withWebhook(req, (rec) => this.remove(this.original(rec))),
      ),
      r("POST", "/webhooks/:app/:token", (req) => this.withWebhook(req, (rec) => this.followUp(rec, req))),
      r("PATCH", "/webhooks/:app/:token/messages/:message", (req) =>
        this.withWebhook(req, (rec) => this.edit(this.followUpOf(rec, req.params.message), req.body)),
      ),
      r("DELETE", "/webhooks/:app/:token/messages/:message", (req) =>
        this.withWebhook(req, (rec) => this.remove(this.followUpOf(rec, req.params.message))),
      ),
    ];
  }

  private callback({ params, body, query }: RouteRequest): RouteResult {
    const rec = this.byId.get(params.interaction ?? "");
    const at = Date.now();
    const record: CallbackRecord = { interactionId: params.interaction ?? "", type: Number(body.type), status: 204, at };
    if (body.data) record.data = body.data as Json;
    this.callbacks.push(record);
    try {
      if (!rec || rec.token !== params.token) throw unknownInteraction();
      if (rec.ack) throw new DiscordApiError(400, 40060, "Interaction has already been acknowledged.");
      if (at - rec.createdAt > this.options.tokenTtlMs) throw unknownInteraction();
      this.respond(rec, Number(body.type), (body.data as Json | undefined) ?? {});
      rec.ack = { type: Number(body.type), at };
    } catch (err) {
      if (err instanceof DiscordApiError) Object.assign(record, { status: err.status, code: err.code });
      throw err;
    }
    if (query.get("with_response") !== "true") return { status: 204 };
    record.status = 200;
    const message = rec.original && !rec.original.loading ? { message: this.core.world.messageJson(rec.original) } : {};
    return {
      status: 200,
      body: {
        interaction: {
          id: rec.id,
          type: rec.type,
          response_message_id: rec.original?.id,
          response_message_loading: rec.original?.loading ?? false,
          response_message_ephemeral: rec.original?.ephemeralFor !== undefined,
        },
        resource: { type: Number(body.type), ...message },
      },
    };
  }

  private respond(rec: InteractionRecord, type: number, data: Json): void {
    const onComponent = () => {
      if (!rec.message) throw invalidForm(["type"], "INTERACTION_CALLBACK_TYPE_INVALID", "Interaction response type is invalid");
      return rec.message;
    };
    switch (type) {
      case 4:
      case 5:
        rec.original = this.post(rec, data, type === 5);
        return;
      case 6:
        rec.original = onComponent();
        return;
      case 7: {
        const m = onComponent();
        editMessage(this.core, m, messageFields(data), data);
        rec.original = m;
        return;
      }
      case 8:
      case 9:
        return;
      default:
        throw invalidForm(["type"], "BASE_TYPE_CHOICES", "Value must be one of {4, 5, 6, 7, 8, 9, 10, 12}.");
    }
  }

  /** A reply to the interaction: in the channel, or seen only by the user with flag 64. */
  private post(rec: InteractionRecord, data: Json, loading: boolean): StoredMessage {
    const { world, events } = this.core;
    const f = messageFields(data);
    const content = f.content ?? "";
    const components = f.components ?? [];
    if (!loading) assertNotEmpty(content, components, data);
    const ephemeral = ((f.flags ?? 0) & EPHEMERAL) !== 0;
    const m = world.add({
      channelId: rec.channel.id,
      ...(rec.channel.guildId ? { guildId: rec.channel.guildId } : {}),
      author: world.bot,
      content,
      components,
      type: rec.type === 2 ? 20 : 19,
      flags: ephemeral ? EPHEMERAL : 0,
      mentions: mentionsIn(world, content, data.allowed_mentions as Json | undefined),
      ...(rec.message ? { referenceId: rec.message.id } : {}),
      ...(ephemeral ? { ephemeralFor: rec.user.id } : {}),
      ...(loading ? { loading: true } : {}),
    });
    if (!ephemeral) events.message("MESSAGE_CREATE", m);
    return m;
  }

  private withWebhook(req: RouteRequest, run: (rec: InteractionRecord) => RouteResult): RouteResult {
    const rec = [...this.byId.values()].find((x) => x.token === req.params.token);
    if (!rec || req.params.app !== this.core.applicationId || !rec.ack) {
      throw new DiscordApiError(404, 10015, "Unknown Webhook");
    }
    if (Date.now() - rec.createdAt > this.options.webhookTtlMs) throw new DiscordApiError(401, 50027, "Invalid Webhook Token");
    return run(rec);
  }

  private original(rec: InteractionRecord): StoredMessage {
    if (!rec.original || rec.original.deleted) throw new DiscordApiError(404, 10008, "Unknown Message");
    return rec.original;
  }

  private followUpOf(rec: InteractionRecord, id: string | undefined): StoredMessage {
    const m = this.core.world.messages.get(id ?? "");
    if (!m || m.deleted || (!rec.followUps.includes(m.id) && m.id !== rec.original?.id)) {
      throw new DiscordApiError(404, 10008, "Unknown Message");
    }
    return m;
  }

  private json(m: StoredMessage): RouteResult {
    return { status: 200, body: this.core.world.messageJson(m) };
  }

  private edit(m: StoredMessage, body: Json): RouteResult {
    editMessage(this.core, m, messageFields(body), body);
    return this.json(m);
  }

  private remove(m: StoredMessage): RouteResult {
    m.deleted = true;
    if (!m.ephemeralFor) this.core.events.messageDelete(m);
    return { status: 204 };
  }

  /** A follow-up; after a deferred reply the first one fills the "thinking" message instead. */
  private followUp(rec: InteractionRecord, req: RouteRequest): RouteResult {
    const wait = req.query.get("wait") === "true";
    let m: StoredMessage;
    if (rec.original?.loading) {
      m = rec.original;
      editMessage(this.core, m, messageFields(req.body), req.body);
    } else {
      const asReply = { ...rec, message: undefined } as InteractionRecord;
      m = this.post(asReply, req.body, false);
      rec.followUps.push(m.id);
    }
    return wait ? this.json(m) : { status: 204 };
  }

  /** Ephemeral texts shown to `userId`, oldest first. */
  ephemeralContents(userId: string): string[] {
    return [...this.core.world.messages.values()]
      .filter((m) => m.ephemeralFor === userId && !m.deleted && !m.loading)
      .map((m) => m.content);
  }
}

function unknownInteraction(): DiscordApiError {
  return new DiscordApiError(404, 10062, "Unknown interaction");
}
