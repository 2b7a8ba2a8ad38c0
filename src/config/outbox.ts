/**
 * `outbox:`: how Antler delivers what it sends on its own (`POST /api/send`, `POST /api/runs`, a
 * schedule's fire): how often it looks for work, how long a replica holds an entry, how often and
 * how far apart a failed delivery is tried again, and how long finished entries are kept.
 */
import { z } from "zod";
import { num } from "./values.js";

export const OutboxConfig = z
  .strictObject({
    /** Attempts per entry before it is given up and reported (the first one counts). */
    retries: num().pipe(z.number().int().min(1).max(100)).default(5),
    /** Wait before the second attempt; each further one waits twice as long, up to 15 minutes. */
    retry_backoff_ms: num().pipe(z.number().int().positive()).default(5_000),
    /** How often each replica looks for entries and due schedules (an accepted request is started at once). */
    poll_ms: num().pipe(z.number().int().positive()).default(1_000),
    /** How long a replica holds an entry it delivers; it renews the hold while it works, and another replica takes over once it lapses. */
    lease_ms: num().pipe(z.number().int().positive()).default(30_000),
    /** Sent and failed entries are kept this long (for `GET /api/send/<id>` and replays of their key), then pruned. */
    keep_hours: num().pipe(z.number().positive()).default(48),
  })
  .prefault({});

export type OutboxConfig = z.output<typeof OutboxConfig>;
