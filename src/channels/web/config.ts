/** `channels.web` keys. */
import { z } from "zod";
import { num } from "../../config/schema.js";

export const WebChannelConfig = z.strictObject({
  /** Where the page lives on Antler's server; the API is under `<path>/api`. */
  path: z
    .string()
    .regex(/^(\/[A-Za-z0-9_-]+)+$/, 'must be a path such as "/chat": slash-separated letters, digits, "-" and "_"')
    .default("/chat"),
  /**
   * Who may open the page from elsewhere than this machine: anyone who presents this token. Empty
   * = loopback only. The config loader fills it from `server.admin_token` when it is empty.
   */
  token: z
    .string()
    .optional()
    .transform((v) => v || undefined),
  /** The page's title and heading. */
  title: z.string().min(1).default("Antler"),
  /** Minimum time between two edits of one streaming reply. */
  edit_interval_ms: num().pipe(z.number().int().min(0)).default(150),
});

export type WebChannelConfig = z.output<typeof WebChannelConfig>;
