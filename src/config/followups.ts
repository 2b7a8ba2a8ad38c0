/**
 * `followups:` and `progress:`: what a message does that arrives while the agent still answers
 * the conversation's last one, and what the reply shows of the agent's work while it runs. Both
 * are set under `gateway:` for every channel, and may be set again on a channel and on a route;
 * the most specific one wins key by key (route, then channel, then gateway). A conversation may
 * pick its follow-up mode with `/queue <mode>` where `allow_command` is true.
 */
import { z } from "zod";
import { bool, num } from "./values.js";

export const FOLLOWUP_MODES = ["queue", "collect", "steer", "interrupt"] as const;
export type FollowupMode = (typeof FOLLOWUP_MODES)[number];

export const PROGRESS_MODES = ["off", "compact", "full"] as const;
export type ProgressMode = (typeof PROGRESS_MODES)[number];

/** `followups: steer` is short for `followups: { mode: steer }`. */
const shorthand = (key: string) => (v: unknown) => (typeof v === "string" ? { [key]: v } : v);

/** One layer of follow-up settings: every key optional, so a channel or a route may set only some. */
export const FollowupsLayer = z.preprocess(
  shorthand("mode"),
  z.strictObject({
    /** queue: one turn per message, in order. collect: what arrives during a run becomes one next turn. steer: it joins the running turn before its next model call. interrupt: it stops the running turn and starts its own. */
    mode: z.enum(FOLLOWUP_MODES).optional(),
    /** collect: the next turn starts once no message came for this long. */
    debounce_ms: num().pipe(z.number().int().min(0).max(60_000)).optional(),
    /** Most follow-ups one running turn takes (collected, steered or waiting); past it a message is refused with a notice. */
    max_followups: num().pipe(z.number().int().min(1).max(1_000)).optional(),
    /** The chat may pick its own mode with `/queue <mode>`. */
    allow_command: bool().optional(),
  }),
);

/** One layer of progress settings. */
export const ProgressLayer = z.preprocess(
  shorthand("mode"),
  z.strictObject({
    /** off: nothing. compact: one line under the streaming text naming the current step. full: each tool call with ✓/✗ and its time, the plan, subagent tasks and approvals that wait. */
    mode: z.enum(PROGRESS_MODES).optional(),
    /** The final message keeps a one-line summary ("3 tools, 41 s"); unset: kept in `full`, dropped in `compact`. */
    summary: bool().optional(),
    /** The model's reasoning (thinking) text goes into the view, collapsed where the platform can. Never into the reply. */
    show_reasoning: bool().optional(),
  }),
);

export type FollowupsLayer = z.output<typeof FollowupsLayer>;
export type ProgressLayer = z.output<typeof ProgressLayer>;

/** Follow-up settings with every key decided. */
export interface FollowupSettings {
  mode: FollowupMode;
  debounce_ms: number;
  max_followups: number;
  allow_command: boolean;
}

/** Progress settings with every key decided. */
export interface ProgressSettings {
  mode: ProgressMode;
  summary: boolean;
  show_reasoning: boolean;
}

export const DEFAULT_FOLLOWUPS: FollowupSettings = { mode: "queue", debounce_ms: 1_500, max_followups: 10, allow_command: true };
export const DEFAULT_PROGRESS: Omit<ProgressSettings, "summary"> & { summary?: boolean } = {
  mode: "compact",
  show_reasoning: false,
};

/** The layers merged, most general first: a key set in a later layer wins. */
export function followupSettings(...layers: Array<FollowupsLayer | undefined>): FollowupSettings {
  return merge(DEFAULT_FOLLOWUPS, layers);
}

/** The layers merged, most general first; `summary` unset follows the mode (kept in `full`). */
export function progressSettings(...layers: Array<ProgressLayer | undefined>): ProgressSettings {
  const merged = merge(DEFAULT_PROGRESS, layers);
  return { mode: merged.mode, show_reasoning: merged.show_reasoning, summary: merged.summary ?? merged.mode === "full" };
}

function merge<T extends object>(base: T, layers: Array<Partial<T> | undefined>): T {
  const out = { ...base };
  for (const layer of layers) {
    for (const [k, v] of Object.entries(layer ?? {})) if (v !== undefined) (out as Record<string, unknown>)[k] = v;
  }
  return out;
}
