/**
 * The follow-up and progress settings of one conversation: `gateway:` for every channel, then the
 * channel's section, then the matching route, each key from the most specific layer that sets it;
 * for the follow-up mode, last of all the chat's own `/queue` pick where the settings allow one.
 */
import type { ConversationRef } from "../../channels/types.js";
import {
  FOLLOWUP_MODES,
  type FollowupMode,
  type FollowupSettings,
  followupSettings,
  type ProgressSettings,
  progressSettings,
} from "../../config/followups.js";
import type { CoreContext } from "../context.js";
import type { ChannelScope } from "../scope.js";

/** Where the chat's `/queue` pick is kept (`BindingStore.conversationSetting`). */
export const QUEUE_SETTING = "followups.mode";

/** Who sent it and where: what the route matches on. */
export interface Whom {
  ref: ConversationRef;
  user: { id: string };
}

/** The follow-up settings from config alone (no `/queue` pick). */
export function configuredFollowups(core: CoreContext, scope: ChannelScope, whom: Whom): FollowupSettings {
  const route = core.conversations.routeOf(scope, whom);
  return followupSettings(core.settings.followups, scope.slot.section.followups, route.followups);
}

/** The conversation's follow-up settings, with its `/queue` pick when the settings allow one. */
export async function followupsFor(core: CoreContext, scope: ChannelScope, whom: Whom): Promise<FollowupSettings> {
  const configured = configuredFollowups(core, scope, whom);
  if (!configured.allow_command) return configured;
  const picked = await pickOf(core, scope, whom.ref.key);
  return isFollowupMode(picked) ? { ...configured, mode: picked } : configured;
}

/**
 * The chat's `/queue` pick. One process reads it from the store once per conversation and keeps
 * it (every turn asks); with several replicas it is read each time, as another may change it.
 */
async function pickOf(core: CoreContext, scope: ChannelScope, key: string): Promise<string | undefined> {
  const id = `${scope.tenant}\n${key}`;
  const kept = core.options.replicas ? undefined : core.queuePicks.get(id);
  if (kept !== undefined) return kept ?? undefined;
  const picked = await scope.store.conversationSetting(key, QUEUE_SETTING);
  if (!core.options.replicas) core.queuePicks.set(id, picked ?? null);
  return picked;
}

/** Stores (or, with undefined, clears) the chat's `/queue` pick. */
export async function setPick(
  core: CoreContext,
  scope: ChannelScope,
  key: string,
  mode: FollowupMode | undefined,
): Promise<void> {
  await scope.store.setConversationSetting(key, QUEUE_SETTING, mode);
  core.queuePicks.set(`${scope.tenant}\n${key}`, mode ?? null);
}

/** The progress view of a reply in this conversation. */
export function progressFor(core: CoreContext, scope: ChannelScope, whom: Whom): ProgressSettings {
  const route = core.conversations.routeOf(scope, whom);
  return progressSettings(core.settings.progress, scope.slot.section.progress, route.progress);
}

export function isFollowupMode(value: string | undefined): value is FollowupMode {
  return (FOLLOWUP_MODES as readonly string[]).includes(value ?? "");
}
