/**
 * Who a person is to Antler: the platform user id scoped by tenant and channel, so the same
 * number on two platforms, or in two tenants, is two people. The id is what memory is kept
 * under and what a remote run sends as `context.user_id`, so it uses only the characters a
 * DeerFlow server accepts in a user id (`[A-Za-z0-9_-]`). A part that needed changing gets a
 * short digest of the original, so two distinct ids never end up the same.
 *
 * One function decides it: linking a person's accounts across platforms later replaces what it
 * returns, not its callers.
 */
import { createHash } from "node:crypto";
import type { RunUser } from "../harness/types.js";

/** `part` with every character outside `allowed` replaced by `_`, plus 8 hex of its SHA-256 when that changed it. */
function safePart(part: string, unsafe: RegExp): string {
  const safe = part.replace(unsafe, "_");
  if (safe === part && part !== "") return part;
  return `${safe}_${createHash("sha256").update(part).digest("hex").slice(0, 8)}`;
}

/**
 * The stable person id of `userId` on `channel` in `tenant`: `<tenant>-<channel>-<user id>`. The
 * tenant and channel parts never hold a `-` (it becomes `_`, with the digest), so the first two
 * `-` always split the three parts and no two (tenant, channel, user) give the same id.
 */
export function personId(tenant: string, channel: string, userId: string): string {
  return [safePart(tenant, /[^A-Za-z0-9_]/g), safePart(channel, /[^A-Za-z0-9_]/g), safePart(userId, /[^A-Za-z0-9_-]/g)].join("-");
}

/** Ids Antler gives turns nobody typed (`antler:api` for the send API): no person is behind them. */
const SYNTHETIC = "antler:";

/** The run's user: the platform identity, with its person id (none for Antler's own), channel and chat type. */
export function runUser(scope: { tenant: string; name: string }, user: { id: string; name?: string }, chatType: string): RunUser {
  const out: RunUser = { ...user, channel: scope.name, chatType };
  if (user.id && !user.id.startsWith(SYNTHETIC)) out.personId = personId(scope.tenant, scope.name, user.id);
  return out;
}
