/**
 * `agent.memory` (and `agents.<name>.memory`): how the agent remembers each person across
 * conversations when `features.memory` is on. Facts live in the configured storage (per tenant,
 * per person); see src/harness/README.md, "Memory per person".
 */
import { z } from "zod";
import { bool, num } from "./values.js";

/** Where memory works in a group chat. */
export const MEMORY_GROUP_MODES = ["off", "writer"] as const;
export type MemoryGroupMode = (typeof MEMORY_GROUP_MODES)[number];

export const MemoryConfig = z
  .strictObject({
    /** The `models[]` entry that reads each turn for facts (a cheap one will do); the agent's model when absent. */
    model: z
      .string()
      .optional()
      .transform((v) => v || undefined),
    /** Most facts kept per person; past it the one updated longest ago goes. */
    max_facts: num().pipe(z.number().int().min(1).max(1_000)).default(50),
    /**
     * off: no memory in group chats (nothing read, learned or shown there). writer: the facts of the
     * person who wrote the message are given to the model, and only their words are read for new ones;
     * the reply, which the whole group reads, may then mention that person's facts.
     */
    groups: z.enum(MEMORY_GROUP_MODES).default("off"),
    /** Read each finished turn for facts with `model`; false: facts come only from the agent's memory tools. */
    extraction: bool().default(true),
  })
  .prefault({});

export type MemoryConfig = z.output<typeof MemoryConfig>;
