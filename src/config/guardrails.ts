/**
 * `agent.guardrails`: the tool-call policy of `agent.features.guardrails`
 * (src/harness/guardrails/). Rules name a tool (a name or a glob) and optionally patterns its
 * string arguments must match; `deny` refuses the calls it matches, `allow` (when given) lets
 * only the calls it matches run, and `use:` adds a policy of your own.
 */
import { z } from "zod";
import { bool } from "./values.js";

/** A pattern written `/body/flags` is a regular expression; anything else is a glob. */
export const REGEX_FORM = /^\/(.*)\/([dgimsuvy]*)$/s;

const Pattern = z
  .string()
  .min(1, "must not be empty")
  .superRefine((pattern, ctx) => {
    const regex = REGEX_FORM.exec(pattern);
    if (!regex) return;
    try {
      new RegExp(regex[1] ?? "", regex[2]);
    } catch (err) {
      ctx.addIssue({ code: "custom", message: `is not a valid regular expression: ${(err as Error).message}` });
    }
  });

/** Argument name → one pattern or a list of them (any may match). */
const ArgPatterns = z.record(
  z.string(),
  z.union([Pattern, z.array(Pattern).min(1)]).transform((p) => (Array.isArray(p) ? p : [p])),
);

const ToolName = z
  .string()
  .regex(/^[A-Za-z0-9_.:*-]+$/, "must be a tool name or a glob of letters, digits, _ . : - and *, e.g. run_*");

/** One rule: a tool name or glob alone, or `{ tool, args, reason }`. */
export const GuardrailRule = z.preprocess(
  (v) => (typeof v === "string" ? { tool: v } : v),
  z.strictObject({
    /** A tool name, or a glob where `*` matches any run of characters. */
    tool: ToolName,
    /** Argument patterns that must all match (globs on the whole value, or `/regex/flags` found anywhere in it). */
    args: ArgPatterns.optional(),
    /** What the model reads when this rule refuses a call. */
    reason: z.string().optional(),
  }),
);

export const GuardrailsConfig = z
  .strictObject({
    /** When given, only calls that match one of these rules run. */
    allow: z.array(GuardrailRule).optional(),
    /** Calls that match one of these rules never run; deny wins over allow. */
    deny: z.array(GuardrailRule).default([]),
    /** `"module:Export"` of a policy of your own (a function, an object or a class with `evaluate`), asked after the lists. */
    use: z.string().optional(),
    /** Handed to the constructor of a `use:` class, as written. */
    options: z.record(z.string(), z.unknown()).optional(),
    /** A `use:` policy that throws refuses the call (true) or lets it run (false). */
    fail_closed: bool().default(true),
  })
  .superRefine((policy, ctx) => {
    if (policy.allow === undefined && policy.deny.length === 0 && !policy.use) {
      ctx.addIssue({ code: "custom", message: "has no rules: add deny:, allow: or use:" });
    }
  });

export type GuardrailRule = z.output<typeof GuardrailRule>;
export type GuardrailsConfig = z.output<typeof GuardrailsConfig>;

/** The issue of `features.guardrails: true` without a policy. */
export const GUARDRAILS_MISSING =
  "is required when features.guardrails is true: add deny: (or allow:, or use:) rules, or set features.guardrails: false";
