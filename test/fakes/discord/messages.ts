/**
 * The REST routes a bot uses in channels: send, edit, fetch and delete messages, typing, threads
 * started from a message, channels, DMs, the bot's own user and application, the Gateway's URL
 * and slash command registration. Each refuses what Discord refuses, with its codes.
 */
import type { Events } from "./events.js";
import type { Cdn, UploadedPart } from "./files.js";
import {
  assertNotEmpty,
  DiscordApiError,
  invalidForm,
  type MessageFields,
  messageFields,
  unknownChannel,
  unknownMessage,
} from "./validate.js";
import {
  ChannelKind,
  type FakeChannel,
  type FakeUser,
  type Json,
  type StoredMessage,
  snowflake,
  userJson,
  type World,
} from "./world.js";

export interface RouteRequest {
  params: Record<string, string>;
  body: Json;
  query: URLSearchParams;
  /** A multipart body's parts (uploads come as `files[n]`). */
  parts: UploadedPart[];
}

export interface RouteResult {
  status: number;
  body?: unknown;
}

export interface Route {
  method: string;
  path: string;
  /** Needs `Authorization: Bot <token>` (interaction callbacks and webhooks do not). */
  auth: boolean;
  run(req: RouteRequest): RouteResult;
}

export interface ChannelCore {
  readonly world: World;
  readonly events: Events;
  readonly cdn: Cdn;
  readonly applicationId: string;
  readonly privilegedIntents: boolean;
  readonly gatewayUrl: string;
  readonly typings: Array<{ channelId: string; at: number }>;
  /** Registered commands by scope: "global" or a guild id. */
  readonly commands: Map<string, Json[]>;
}

const ok = (body: unknown, status = 200): RouteResult => ({ status, body });

export function channelRoutes(core: ChannelCore): Route[] {
  const { world } = core;
  const channel = (id: string | undefined) => world.channels.get(id ?? "") ?? throwIt(unknownChannel());
  const message = (c: FakeChannel, id: string | undefined) => {
    const m = world.messages.get(id ?? "");
    if (!m || m.channelId !== c.id || m.deleted || m.ephemeralFor) throw unknownMessage();
    return m;
  };
  const readable = (m: StoredMessage) =>
    world.messageJson(m, { withContent: core.privilegedIntents || core.events.contentFor(m, 0) });
  const r = (method: string, path: string, run: Route["run"], auth = true): Route => ({ method, path, auth, run });
  return [
    r("GET", "/gateway", () => ok({ url: core.gatewayUrl })),
    r("GET", "/gateway/bot", () =>
      ok({
        url: core.gatewayUrl,
        shards: 1,
        session_start_limit: { total: 1000, remaining: 999, reset_after: 0, max_concurrency: 1 },
      }),
    ),
    r("GET", "/users/@me", () => ok({ ...userJson(world.bot), verified: true, mfa_enabled: false, flags: 0 })),
    r("GET", "/users/:user", ({ params }) => {
      const u = world.users.get(params.user ?? "");
      if (!u) throw new DiscordApiError(404, 10013, "Unknown User");
      return ok(userJson(u));
    }),
    r("POST", "/users/@me/channels", ({ body }) => {
      const u = world.users.get(String(body.recipient_id ?? ""));
      if (!u) throw invalidForm(["recipient_id"], "USER_NOT_FOUND", "Unknown user");
      return ok(world.channelJson(world.dmWith(u)));
    }),
    r("GET", "/applications/@me", () => ok(applicationJson(core))),
    r("GET", "/oauth2/applications/@me", () => ok(applicationJson(core))),
    r("GET", "/channels/:channel", ({ params }) => ok(world.channelJson(channel(params.channel)))),
    r("POST", "/channels/:channel/typing", ({ params }) => {
      core.typings.push({ channelId: channel(params.channel).id, at: Date.now() });
      return { status: 204 };
    }),
    r("GET", "/channels/:channel/messages", ({ params, query }) => {
      const all = world.in(channel(params.channel).id).filter((m) => !m.deleted);
      const limit = Math.min(100, Number(query.get("limit") ?? 50));
      return ok(all.reverse().slice(0, limit).map(readable));
    }),
    r("GET", "/channels/:channel/messages/:message", ({ params }) =>
      ok(readable(message(channel(params.channel), params.message))),
    ),
    r("POST", "/channels/:channel/messages", ({ params, body, parts }) =>
      ok(world.messageJson(send(core, channel(params.channel), body, parts))),
    ),
    r("PATCH", "/channels/:channel/messages/:message", ({ params, body }) => {
      const m = message(channel(params.channel), params.message);
      if (m.author.id !== world.bot.id) throw new DiscordApiError(403, 50005, "Cannot edit a message authored by another user");
      editMessage(core, m, messageFields(body), body);
      return ok(world.messageJson(m));
    }),
    r("DELETE", "/channels/:channel/messages/:message", ({ params }) => {
      const m = message(channel(params.channel), params.message);
      if (m.author.id !== world.bot.id) throw new DiscordApiError(403, 50013, "Missing Permissions");
      m.deleted = true;
      core.events.messageDelete(m);
      return { status: 204 };
    }),
    r("POST", "/channels/:channel/messages/:message/threads", ({ params, body }) => {
      const c = channel(params.channel);
      const m = message(c, params.message);
      return ok(world.channelJson(startThread(core, c, m, body)), 201);
    }),
    ...commandRoutes(core),
  ];
}

/**
 * Sends a message as the bot, with its uploads; dispatches MESSAGE_CREATE as Discord does for the
 * bot's own messages. With `enforce_nonce`, a nonce the bot used within the last few minutes
 * returns that first message instead of creating another.
 */
export function send(core: ChannelCore, c: FakeChannel, body: Json, parts: UploadedPart[] = []): StoredMessage {
  if (c.type === ChannelKind.GuildForum) throw new DiscordApiError(400, 50008, "Cannot send messages in a non-text channel");
  if (c.type === ChannelKind.DM && c.recipient && core.world.closedDms.has(c.recipient.id)) {
    throw new DiscordApiError(403, 50007, "Cannot send messages to this user");
  }
  const nonceKey = enforcedNonce(core.world, body);
  if (nonceKey) {
    const seen = core.world.nonces.get(nonceKey);
    const first = seen && Date.now() - seen.at < core.world.nonceWindowMs ? core.world.messages.get(seen.messageId) : undefined;
    if (first) return first;
  }
  const m = create(core, c, body, parts);
  if (nonceKey) core.world.nonces.set(nonceKey, { messageId: m.id, at: Date.now() });
  return m;
}

/** The author-and-nonce key when the body asks Discord to enforce its nonce; checks the nonce as Discord does. */
function enforcedNonce(world: World, body: Json): string | undefined {
  const nonce = body.nonce;
  if (nonce === undefined || nonce === null) return undefined;
  if (typeof nonce !== "string" && typeof nonce !== "number") throw invalidForm(["nonce"], "BASE_TYPE_BAD_TYPE", "Invalid nonce");
  if (String(nonce).length > 25) throw invalidForm(["nonce"], "BASE_TYPE_MAX_LENGTH", "Must be 25 or fewer in length.");
  return body.enforce_nonce === true ? `${world.bot.id}:${String(nonce)}` : undefined;
}

function create(core: ChannelCore, c: FakeChannel, body: Json, parts: UploadedPart[]): StoredMessage {
  const f = messageFields(body);
  const content = f.content ?? "";
  const components = f.components ?? [];
  const attachments = core.cdn.fromBot(c.id, body, parts);
  assertNotEmpty(content, components, { ...body, files: attachments });
  const ref = reference(core.world, c, body.message_reference as Json | undefined);
  const m = core.world.add({
    channelId: c.id,
    ...(c.guildId ? { guildId: c.guildId } : {}),
    author: core.world.bot,
    content,
    components,
    type: ref ? 19 : 0,
    flags: (f.flags ?? 0) & ((1 << 2) | (1 << 12)),
    mentions: mentionsIn(core.world, content, body.allowed_mentions as Json | undefined, ref),
    ...(ref ? { referenceId: ref.id } : {}),
    ...(attachments.length > 0 ? { attachments } : {}),
  });
  core.events.message("MESSAGE_CREATE", m);
  return m;
}

/** Applies an edit; Discord accepts an unchanged one, and refuses one that leaves nothing to show. */
export function editMessage(core: ChannelCore, m: StoredMessage, f: MessageFields, body: Json): void {
  assertNotEmpty(f.content ?? m.content, f.components ?? m.components, body);
  core.world.edit(m, {
    ...(f.content !== undefined ? { content: f.content } : {}),
    ...(f.components ? { components: f.components } : {}),
  });
  if (!m.ephemeralFor) core.events.message("MESSAGE_UPDATE", m);
}

function reference(world: World, c: FakeChannel, ref: Json | undefined): StoredMessage | undefined {
  if (!ref?.message_id) return undefined;
  const target = world.messages.get(String(ref.message_id));
  if (target && target.channelId === c.id && !target.deleted) return target;
  if (ref.fail_if_not_exists === false) return undefined;
  throw invalidForm(["message_reference"], "MESSAGE_REFERENCE_UNKNOWN_MESSAGE", "Unknown message");
}

/** Users a bot message pings: `<@id>` in the text as `allowed_mentions` lets them, plus the replied-to author. */
export function mentionsIn(world: World, content: string, allowed: Json | undefined, ref?: StoredMessage): FakeUser[] {
  const ids = [...content.matchAll(/<@!?(\d+)>/g)].map((x) => x[1] as string);
  const parse = allowed?.parse as string[] | undefined;
  const listed = allowed?.users as string[] | undefined;
  const pinged = ids.filter((id) => !allowed || parse?.includes("users") || listed?.includes(id));
  if (ref && (allowed?.replied_user ?? true) !== false) pinged.push(ref.author.id);
  return [...new Set(pinged)].map((id) => world.users.get(id)).filter((u): u is FakeUser => u !== undefined);
}

function startThread(core: ChannelCore, c: FakeChannel, m: StoredMessage, body: Json): FakeChannel {
  if (c.type !== ChannelKind.GuildText) throw new DiscordApiError(400, 50024, "Cannot execute action on this channel type");
  if (m.threadId) throw new DiscordApiError(400, 160004, "A thread has already been created for this message");
  const name = body.name;
  if (typeof name !== "string" || name.length < 1 || name.length > 100) {
    throw invalidForm(["name"], "BASE_TYPE_BAD_LENGTH", "Must be between 1 and 100 in length.");
  }
  const duration = body.auto_archive_duration ?? 4320;
  if (![60, 1440, 4320, 10080].includes(Number(duration))) {
    throw invalidForm(["auto_archive_duration"], "BASE_TYPE_CHOICES", "Value must be one of {60, 1440, 4320, 10080}.");
  }
  const thread = core.world.addThread(c, m.id, name, core.world.bot.id, Number(duration));
  m.threadId = thread.id;
  core.events.threadCreate(thread, false);
  return thread;
}

function applicationJson(core: ChannelCore): Json {
  return {
    id: core.applicationId,
    name: core.world.bot.username,
    icon: null,
    description: "",
    bot_public: true,
    bot_require_code_grant: false,
    verify_key: "0".repeat(64),
    // GATEWAY_MESSAGE_CONTENT_LIMITED: the Message Content toggle is on (an app in under 100 servers).
    flags: core.privilegedIntents ? 1 << 19 : 0,
    team: null,
    approximate_guild_count: 1,
    bot: userJson(core.world.bot),
  };
}

function commandRoutes(core: ChannelCore): Route[] {
  const scope = (params: Record<string, string>) => {
    if (params.app !== core.applicationId) throw new DiscordApiError(403, 50001, "Missing Access");
    if (params.guild !== undefined && params.guild !== core.world.guild.id)
      throw new DiscordApiError(404, 10004, "Unknown Guild");
    return params.guild ?? "global";
  };
  const put = (req: RouteRequest): RouteResult => {
    const key = scope(req.params);
    const list = checkCommands(req.body);
    const old = core.commands.get(key) ?? [];
    const saved = list.map((c) => ({
      id: (old.find((o) => o.name === c.name)?.id as string | undefined) ?? snowflake(),
      application_id: core.applicationId,
      version: snowflake(),
      type: c.type ?? 1,
      name: c.name,
      description: c.description ?? "",
      options: c.options ?? [],
      default_member_permissions: c.default_member_permissions ?? null,
      nsfw: false,
      integration_types: [0],
      ...(key === "global" ? {} : { guild_id: key }),
    }));
    core.commands.set(key, saved);
    return ok(saved);
  };
  const get = (req: RouteRequest): RouteResult => ok(core.commands.get(scope(req.params)) ?? []);
  return [
    { method: "PUT", path: "/applications/:app/commands", auth: true, run: put },
    { method: "GET", path: "/applications/:app/commands", auth: true, run: get },
    { method: "PUT", path: "/applications/:app/guilds/:guild/commands", auth: true, run: put },
    { method: "GET", path: "/applications/:app/guilds/:guild/commands", auth: true, run: get },
  ];
}

function checkCommands(body: unknown): Json[] {
  if (!Array.isArray(body)) throw invalidForm([], "LIST_TYPE_CONVERT", "Only iterables may be used in a ListType");
  if (body.length > 100) throw new DiscordApiError(400, 30032, "Maximum number of application commands reached (100)");
  const names = new Set<string>();
  body.forEach((c: Json, i) => {
    const name = String(c.name ?? "");
    const chat = (c.type ?? 1) === 1;
    if (!/^[-_'\p{L}\p{N}]{1,32}$/u.test(name) || (chat && name !== name.toLowerCase())) {
      throw invalidForm([i, "name"], "APPLICATION_COMMAND_INVALID_NAME", "Command name is invalid");
    }
    const description = String(c.description ?? "");
    if (chat && (description.length < 1 || description.length > 100)) {
      throw invalidForm([i, "description"], "BASE_TYPE_BAD_LENGTH", "Must be between 1 and 100 in length.");
    }
    if (names.has(name))
      throw invalidForm([i, "name"], "APPLICATION_COMMANDS_DUPLICATE_NAME", "Application command names must be unique");
    names.add(name);
  });
  return body as Json[];
}

function throwIt(err: Error): never {
  throw err;
}
