/**
 * Routing: which agent serves a chat. `routes:` is an ordered list of rules; the first rule whose
 * matchers all hold wins, and a chat no rule matches goes to its tenant's default agent. A user's
 * `/agent` choice, where the matching rule allows switching, comes before the rules.
 *
 * This layer sees plain facts about a message (channel, chat, user, workspace, chat type), not
 * channel types, so the dispatcher and tests can ask it alike.
 */
import { Tenancy } from "../config/agents.js";
import type { FollowupsLayer, ProgressLayer } from "../config/followups.js";
import type { AppConfig, RouteRule } from "../config/schema.js";

/** What a rule can match on. */
export interface RouteInput {
  channel: string;
  chat: string;
  user: string;
  /** Slack team id, Feishu tenant key, DingTalk corp id, Discord guild id; absent where none. */
  workspace?: string;
  chatType: "direct" | "group";
}

/** The routing decision for one chat. */
export interface Route {
  tenant: string;
  /** The agent the rules (or the tenant's default) give. */
  agent: string;
  /** Index of the rule that matched; undefined when none did. */
  rule: number | undefined;
  /** `/agent` may switch this chat. */
  allowSwitch: boolean;
  /** The agents `/agent` offers here, the routed one included. */
  choices: string[];
  /** The matching rule's follow-up settings, if it has any (config/followups.ts). */
  followups?: FollowupsLayer;
  /** The matching rule's progress settings, if it has any. */
  progress?: ProgressLayer;
}

const MATCHERS = ["channel", "chat", "user", "workspace", "chat_type"] as const;
type Matcher = (typeof MATCHERS)[number];

function inputValue(input: RouteInput, matcher: Matcher): string | undefined {
  switch (matcher) {
    case "channel":
      return input.channel;
    case "chat":
      return input.chat;
    case "user":
      return input.user;
    case "workspace":
      return input.workspace;
    case "chat_type":
      return input.chatType;
  }
}

/** A rule's values for `matcher`; `dm`, the old name of a direct chat, reads as `direct`. */
function wantedBy(rule: RouteRule, matcher: Matcher): readonly string[] | undefined {
  const wanted = rule[matcher] as readonly string[] | undefined;
  return matcher === "chat_type" ? wanted?.map((t) => (t === "dm" ? "direct" : t)) : wanted;
}

function matches(rule: RouteRule, input: RouteInput): boolean {
  return MATCHERS.every((m) => {
    const wanted = wantedBy(rule, m);
    if (wanted === undefined) return true;
    const value = inputValue(input, m);
    return value !== undefined && wanted.includes(value);
  });
}

export class Router {
  readonly tenancy: Tenancy;
  private readonly rules: readonly RouteRule[];

  constructor(config: AppConfig) {
    this.tenancy = new Tenancy(config);
    this.rules = config.routes;
  }

  route(input: RouteInput): Route {
    const tenant = this.tenancy.tenantOfChannel(input.channel);
    const usable = this.tenancy.agentsFor(tenant);
    // A rule whose agent this tenant may not use never applies to its chats (startup checks make
    // such rules name their tenant's channels, so this only guards against a changed config).
    const index = this.rules.findIndex((rule) => usable.includes(rule.agent) && matches(rule, input));
    const rule = index === -1 ? undefined : this.rules[index];
    const agent = rule?.agent ?? this.tenancy.defaultAgentFor(tenant);
    const offered = rule?.switch_to ?? usable;
    const choices = usable.filter((name) => name === agent || offered.includes(name));
    return {
      tenant,
      agent,
      rule: rule ? index : undefined,
      allowSwitch: rule?.allow_switch ?? true,
      choices,
      ...(rule?.followups ? { followups: rule.followups } : {}),
      ...(rule?.progress ? { progress: rule.progress } : {}),
    };
  }

  /** The tenant of a channel's chats. */
  tenantOf(channel: string): string {
    return this.tenancy.tenantOfChannel(channel);
  }
}

/**
 * Rules that can never match, for a warning at startup: a channel that is not configured or not
 * enabled, a chat type no channel has, or a rule an earlier one always takes first.
 */
export function routeWarnings(config: AppConfig): string[] {
  const warnings: string[] = [];
  config.routes.forEach((rule, i) => {
    const at = `routes[${i}] (agent ${rule.agent})`;
    if (rule.chat_type?.includes("dm")) warnings.push(`routes[${i}].chat_type: dm is deprecated: write direct`);
    for (const m of MATCHERS) {
      if ((rule[m] as readonly string[] | undefined)?.length === 0)
        warnings.push(`${at}: ${m} is an empty list, so it never matches`);
    }
    if (rule.channel) {
      const live = rule.channel.filter((c) => config.channels[c]?.enabled);
      const dead = rule.channel.filter((c) => !config.channels[c]?.enabled);
      if (dead.length > 0 && live.length === 0) {
        warnings.push(`${at}: channel ${dead.join(", ")} is not configured or not enabled, so it never matches`);
      }
    }
    const earlier = config.routes.findIndex((other, j) => j < i && covers(other, rule));
    if (earlier !== -1) warnings.push(`${at}: routes[${earlier}] matches every chat it would, so it never matches`);
  });
  return warnings;
}

/** `a` matches every input `b` matches: each matcher of `a` is also in `b`, with no value `a` lacks. */
function covers(a: RouteRule, b: RouteRule): boolean {
  return MATCHERS.every((m) => {
    const mine = wantedBy(a, m);
    if (mine === undefined) return true;
    const theirs = wantedBy(b, m);
    return theirs?.every((v) => mine.includes(v));
  });
}
