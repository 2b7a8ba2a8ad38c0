/**
 * The relay channel's config section (`channels.<name>` without `enabled` and `use`). The
 * registry checks it with this schema at startup and reports a bad key by its path.
 */
import { accessConfigShape, num, z } from "antler/channel";

export const RelayConfig = z
  .object({
    /** Where replies go: the relay POSTs each send, edit and file here as JSON. */
    outbox_url: z.string().url(),
    /** Bearer token both ways: inbound events must carry it, outbound calls send it. */
    secret: z.string().min(1),
    /** Longest message the relay takes, in characters. */
    max_text_length: num().default(4000),
    // allowed_users, allowed_chats, require_mention, approvers: the keys every adapter shares.
    ...accessConfigShape,
  })
  .strict();

export type RelayConfig = z.output<typeof RelayConfig>;
