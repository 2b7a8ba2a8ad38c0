/**
 * The channel registry: turns `channels.<name>` config sections into channel instances.
 * Built-in names map to `"module:Export"` paths; a section's `use:` may name any other class, so a
 * new platform needs no change here. Classes are loaded by reflection and duck-typed: the
 * registry checks the methods the contract requires and names any that are missing.
 */
import path from "node:path";
import { fileURLToPath } from "node:url";
import { validate } from "../config/loader.js";
import { applyRenames } from "../config/renames.js";
import { type ChannelSection, CORE_CHANNEL_KEYS } from "../config/schema.js";
import { nearest } from "../config/suggest.js";
import { AntlerError, ConfigError, errorMessage } from "../errors.js";
import type { Logger } from "../log/logger.js";
import { resolveClass } from "../reflection/index.js";
import { AccessConfig, accessRulesFrom, OPEN_ACCESS } from "./kit/access.js";
import { ChannelLifecycle, lifecycleOf } from "./kit/lifecycle.js";
import {
  type AccessRules,
  type Channel,
  type ChannelClass,
  type ChannelState,
  type ConversationHistory,
  type HttpMount,
  type InboundSink,
  REQUIRED_CHANNEL_METHODS,
} from "./types.js";

const here = path.dirname(fileURLToPath(import.meta.url));

/** Built-in channel names and the class each loads. */
export const BUILTIN_CHANNELS: Readonly<Record<string, string>> = {
  telegram: `${here}/telegram/index.js:TelegramChannel`,
  slack: `${here}/slack/index.js:SlackChannel`,
  feishu: `${here}/feishu/index.js:FeishuChannel`,
  lark: `${here}/feishu/index.js:FeishuChannel`,
  dingtalk: `${here}/dingtalk/index.js:DingTalkChannel`,
  discord: `${here}/discord/index.js:DiscordChannel`,
  web: `${here}/web/index.js:WebChannel`,
  console: `${here}/console/index.js:ConsoleChannel`,
};

/** Counters of each channel: `errors` counts `noteError`, the rest the dispatcher's observer events (src/core/observer.ts). */
export interface ChannelCounters {
  inbound: number;
  runs: number;
  replies: number;
  errors: number;
  rate_limited: number;
}

/** What status reports for one channel. Field names follow the admin API (snake_case). */
export interface ChannelReport {
  name: string;
  enabled: boolean;
  state: ChannelState;
  connected: boolean;
  mode: string | null;
  reason: string | null;
  last_error: { message: string; at: string } | null;
  last_inbound_at: string | null;
  last_outbound_at: string | null;
  counters: ChannelCounters;
  /** A page on this server where people chat through the channel (the web chat), else null. */
  link: string | null;
  /** With several replicas: the replica that runs this exclusive channel now, else null. */
  leader?: string | null;
}

/**
 * One configured channel: its instance (if it loaded) and everything the core tracks about it.
 * Its start and last error are the lifecycle's (`life`): the channel's own when it is built on
 * `LifecycleChannel`, else one the slot keeps for it.
 */
export class ChannelSlot {
  #channel: Channel | undefined;
  /** Set when the core holds the channel back: disabled in config, or another replica runs it. */
  override: { state: "disabled" | "standby"; reason: string } | undefined;
  /** Stands in for the lifecycle of a channel that has none of its own, or that did not load. */
  readonly #standIn: ChannelLifecycle;
  lastInboundAt: number | undefined;
  lastOutboundAt: number | undefined;
  readonly counters: ChannelCounters = { inbound: 0, runs: 0, replies: 0, errors: 0, rate_limited: 0 };
  /** The start failure whose stack was logged: a retry failing the same way logs one line only. */
  #loggedFailure: string | undefined;

  constructor(
    readonly name: string,
    readonly enabled: boolean,
    readonly section: ChannelSection,
  ) {
    this.#standIn = new ChannelLifecycle(name, typeof section.mode === "string" ? section.mode : "unknown");
  }

  get channel(): Channel | undefined {
    return this.#channel;
  }

  /** A fresh instance keeps the last error of the one it replaces. */
  set channel(next: Channel | undefined) {
    const previous = this.life.status().lastError ?? null;
    this.#channel = next;
    this.life.inherit(previous);
  }

  /** The lifecycle the slot's state and last error are read from. */
  get life(): ChannelLifecycle {
    return (this.#channel && lifecycleOf(this.#channel)) ?? this.#standIn;
  }

  /** The state the core holds the channel in, if any: disabled, standby, starting, or failed to load or start. */
  get held(): { state: ChannelState; reason: string } | undefined {
    return this.override ?? this.life.startState();
  }

  /**
   * Starts the loaded channel with `sink`. Until it is up its lifecycle says "starting"; if the
   * start throws, "failed" with the reason (and the error is counted), and the error is rethrown.
   */
  async start(sink: InboundSink): Promise<void> {
    const channel = this.#channel;
    if (!channel) return;
    const life = this.life;
    const standIn = life === this.#standIn;
    this.override = undefined;
    if (standIn) life.opening();
    try {
      await channel.start(sink);
      if (standIn) life.opened();
      this.#loggedFailure = undefined;
    } catch (err) {
      life.startFailed(err);
      this.noteError(err);
      throw err;
    }
  }

  /**
   * True the first time a start fails with this error's message since the channel last ran: the
   * caller logs the stack then, and the supervisor's one line per retry covers the repeats.
   */
  firstFailure(err: unknown): boolean {
    const message = errorMessage(err);
    if (this.#loggedFailure === message) return false;
    this.#loggedFailure = message;
    return true;
  }

  /** The channel could not be loaded (or built again for a restart): failed with `err`'s message. */
  failedToLoad(err: unknown): void {
    this.life.startFailed(err);
    this.noteError(err);
  }

  /** Access rules the dispatcher enforces for this channel. */
  get access(): AccessRules {
    return this.channel?.access ?? accessFromSection(this.section);
  }

  noteError(err: unknown): void {
    this.counters.errors++;
    this.life.noteError(err);
  }

  report(): ChannelReport {
    const held = this.held;
    const own = this.channel && !held ? safeStatus(this.channel) : undefined;
    const lastError = newest(own?.lastError ?? undefined, this.life.status().lastError ?? undefined);
    return {
      name: this.name,
      enabled: this.enabled,
      state: held?.state ?? own?.state ?? "stopped",
      connected: own?.connected ?? false,
      mode: own?.mode ?? (typeof this.section.mode === "string" ? this.section.mode : null),
      reason: held?.reason ?? own?.reason ?? null,
      last_error: lastError ? { message: lastError.message, at: new Date(lastError.at).toISOString() } : null,
      last_inbound_at: iso(this.lastInboundAt),
      last_outbound_at: iso(this.lastOutboundAt),
      counters: { ...this.counters },
      link: (this.enabled && this.channel?.link) || null,
    };
  }
}

function safeStatus(channel: Channel) {
  try {
    return channel.status();
  } catch (err) {
    return { state: "failed" as const, connected: false, mode: "unknown", reason: `status() threw: ${errorMessage(err)}` };
  }
}

function newest(a: { message: string; at: number } | undefined, b: { message: string; at: number } | undefined) {
  if (!a) return b;
  if (!b) return a;
  return a.at >= b.at ? a : b;
}

function iso(ms: number | undefined): string | null {
  return ms === undefined ? null : new Date(ms).toISOString();
}

export interface LoadChannelsOptions {
  baseDir: string;
  logger: Logger;
  /** The server; each channel gets a mount of its own, so it can take down only its own routes. */
  http: { mount(owner: string): HttpMount };
  /** Reads a conversation of the named channel back (see `ChannelContext.history`). */
  history?: (channel: string, key: string) => Promise<ConversationHistory>;
  /** The server's base URL once it listens (see `ChannelContext.serverUrl`). */
  serverUrl?: () => string | undefined;
  /** `media.max_file_mb` in bytes (see `ChannelContext.maxFileBytes`). */
  maxFileBytes?: number;
}

/**
 * Builds a slot for every configured channel and instantiates the enabled ones. A config
 * section of the wrong shape is a ConfigError (the operator must fix it); a class that cannot be
 * loaded marks only that channel failed.
 */
export async function loadChannels(
  sections: Record<string, ChannelSection>,
  options: LoadChannelsOptions,
): Promise<ChannelSlot[]> {
  const slots: ChannelSlot[] = [];
  const configErrors: ConfigError[] = [];
  for (const [name, section] of Object.entries(sections)) {
    const slot = new ChannelSlot(name, section.enabled, section);
    slots.push(slot);
    if (!section.enabled) {
      slot.override = { state: "disabled", reason: `channels.${name}.enabled is false` };
      continue;
    }
    try {
      slot.channel = await instantiate(name, section, options);
    } catch (err) {
      if (err instanceof ConfigError) {
        configErrors.push(err);
        continue;
      }
      slot.failedToLoad(err);
      options.logger.error({ channel: name, err }, "channel failed to load");
    }
  }
  if (configErrors.length > 0) throw new ConfigError(configErrors.flatMap((e) => e.issues));
  return slots;
}

/** A section checked against its class's own schema, without building the channel. */
export interface CheckedSection {
  /** The class's `"module:Export"` path. */
  spec: string;
  /** The built-in channel the section loads (`slack` for `use: slack`), if it is one. */
  builtin: string | undefined;
  cls: ChannelClass;
  /** The section as the class's schema parsed it (defaults filled in), without `enabled` and `use`. */
  config: Record<string, unknown>;
}

/**
 * Loads a section's class and checks the section with the class's `configSchema` (old names
 * renamed first, each with a warning). A disabled section is checked the same way: preflight
 * (src/preflight.ts) runs this for every section, so a typo in a switched-off block is reported.
 */
export async function checkSection(
  name: string,
  section: ChannelSection,
  options: Pick<LoadChannelsOptions, "baseDir" | "logger">,
): Promise<CheckedSection> {
  const { spec, builtin } = classPath(name, section);
  const cls = (await resolveClass(spec, null, { baseDir: options.baseDir })) as unknown as ChannelClass;
  const missing = REQUIRED_CHANNEL_METHODS.filter((m) => typeof (cls.prototype as Record<string, unknown>)[m] !== "function");
  if (missing.length > 0) {
    throw new AntlerError("channel_contract", `${spec} is not a channel: it lacks ${missing.map((m) => `${m}()`).join(", ")}`);
  }
  const rest: Record<string, unknown> = { ...section };
  for (const key of CORE_CHANNEL_KEYS) delete rest[key];
  const { section: renamed, warnings } = applyRenames(rest, cls.configRenames ?? {}, ["channels", name]);
  for (const warning of warnings) options.logger.warn({ channel: name }, warning);
  const config = cls.configSchema ? validate(cls.configSchema, renamed, ["channels", name], [...CORE_CHANNEL_KEYS]) : renamed;
  return { spec, builtin, cls, config: config as Record<string, unknown> };
}

/** Creates a channel instance from its config section (used at load and on restart). */
export async function instantiate(name: string, section: ChannelSection, options: LoadChannelsOptions): Promise<Channel> {
  const { spec, cls, config } = await checkSection(name, section, options);
  const logger = options.logger.child({ channel: name });
  const http = options.http.mount(name);
  const { history, serverUrl, maxFileBytes } = options;
  const channel = new cls({
    name,
    config: config as never,
    logger,
    http,
    baseDir: options.baseDir,
    ...(history ? { history: (key: string) => history(name, key) } : {}),
    ...(serverUrl ? { serverUrl } : {}),
    ...(maxFileBytes ? { maxFileBytes } : {}),
  });
  if (!channel.capabilities || typeof channel.capabilities.maxTextLength !== "number") {
    throw new AntlerError("channel_contract", `${spec} is not a channel: it has no capabilities`);
  }
  return channel;
}

/**
 * The class a section loads: `use:` as written, where a bare built-in name (`use: slack`) means
 * that built-in, so a second bot of one platform is a channel of its own name; without `use:`,
 * the built-in of the channel's own name. A bare name that is no built-in is refused, with the
 * built-in it is nearest to (`use: slak` → slack).
 */
function classPath(name: string, section: ChannelSection): { spec: string; builtin: string | undefined } {
  const use = section.use;
  const builtins = Object.keys(BUILTIN_CHANNELS);
  if (use !== undefined) {
    const spec = BUILTIN_CHANNELS[use];
    if (spec) return { spec, builtin: use };
    if (use.includes(":")) return { spec: use, builtin: undefined };
    const near = nearest(use, builtins);
    const hint = near ? `did you mean ${near}? ` : "";
    throw new ConfigError([
      {
        path: `channels.${name}.use`,
        message: `"${use}" is not a built-in channel: ${hint}write one of ${builtins.join(", ")}, or "module:Export" of a channel class`,
      },
    ]);
  }
  const spec = BUILTIN_CHANNELS[name];
  if (spec) return { spec, builtin: name };
  throw new ConfigError([
    {
      path: `channels.${name}.use`,
      message: `"${name}" is not a built-in channel (${builtins.join(", ")}): set use: to one of them, or to "module:Export" of a channel class`,
    },
  ]);
}

/** Access rules from a section, for channels that do not build their own. */
export function accessFromSection(section: ChannelSection): AccessRules {
  const parsed = AccessConfig.safeParse(section);
  return parsed.success ? accessRulesFrom(parsed.data) : OPEN_ACCESS;
}

/** Stops every slot's channel; one that fails to stop is logged, and the others still stop. */
export async function stopChannels(slots: ChannelSlot[], logger: Logger): Promise<void> {
  await Promise.all(
    slots.map((slot) =>
      slot.channel?.stop().catch((err: unknown) => logger.warn({ err, channel: slot.name }, "channel stop failed")),
    ),
  );
}

/**
 * Exclusive channels stop taking updates (and, with several replicas, give their leases up) while
 * their send path stays open for the replies that are still running.
 */
export async function stopIntakes(slots: ChannelSlot[], logger: Logger): Promise<void> {
  await Promise.all(
    slots.map((slot) =>
      slot.channel?.exclusive
        ? slot.channel
            .stopIntake?.()
            .catch((err: unknown) => logger.warn({ err, channel: slot.name }, "channel intake stop failed"))
        : undefined,
    ),
  );
}
