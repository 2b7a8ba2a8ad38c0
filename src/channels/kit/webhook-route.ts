/**
 * Where channels' webhooks live. The core gives every channel one path, `/webhooks/<channel
 * name>`, so two instances of a platform never share a route; a path an older version used stays
 * mounted beside it as an alias (see each adapter's README).
 */
import type { RouteHandler } from "../../server/http.js";
import type { HttpMount } from "../types.js";

/** The webhook path of the channel named `channel`. */
export function webhookPath(channel: string): string {
  return `/webhooks/${channel}`;
}

/**
 * Mounts `handler` for POST at the channel's webhook path and at each alias. When one of the
 * paths is taken (`RouteConflictError`, naming both channels) nothing stays mounted.
 */
export function mountWebhook(
  http: HttpMount,
  channel: string,
  handler: RouteHandler,
  aliases: Array<string | undefined> = [],
): string[] {
  const paths = [...new Set([webhookPath(channel), ...aliases.filter((p): p is string => Boolean(p))])];
  try {
    for (const path of paths) http.route("POST", path, handler);
  } catch (err) {
    http.unroute();
    throw err;
  }
  return paths;
}
