/**
 * The `context` every server run carries: who the run serves, in the keys a DeerFlow graph reads
 * (`user_id` picks its memory, file and thread buckets), under the agent's configured keys
 * (`remote.context`, DeerFlow's switches by default). The identity keys are written last, so no
 * configured key can speak for another user.
 */
import type { RemoteAgentConfig } from "../../config/remote.js";
import { identityOf } from "../middleware/dynamic-context.js";
import type { RunUser } from "../types.js";

/** A run's context, or undefined when the agent sends none (`remote.context: false`). */
export function runContext(
  settings: Pick<RemoteAgentConfig, "context">,
  threadId: string,
  user: RunUser | undefined,
): Record<string, unknown> | undefined {
  if (settings.context === false) return undefined;
  const identity: Record<string, unknown> = { ...identityOf(user), thread_id: threadId };
  const configured = Object.fromEntries(Object.entries(settings.context).filter(([key]) => !IDENTITY_KEYS.has(key)));
  return { ...configured, ...identity };
}

/** Keys only Antler writes: a configured value for one is dropped, even when the run has no user. */
const IDENTITY_KEYS = new Set(["user_id", "channel_user_id", "channel_name", "chat_type", "thread_id"]);

/** The thread's metadata keys for its user: the person id as `user_id`, the platform id as `channel_user_id`. */
export function userMetadata(user: RunUser | undefined): Record<string, string> {
  if (!user) return {};
  // A caller without a person id (an SDK user's own) keeps the platform id as the user.
  const out: Record<string, string> = { user_id: user.personId || user.id };
  if (user.id) out.channel_user_id = user.id;
  if (user.name) out.user_name = user.name;
  return out;
}
