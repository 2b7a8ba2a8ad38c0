/**
 * The middleware chain in DeerFlow's order, built from feature switches, with extra middlewares
 * placed relative to named ones. Clarification is always last.
 */
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { AgentMiddleware } from "langchain";
import { AntlerError } from "../../errors.js";
import type { Skill } from "../skills/parse.js";
import { SUBAGENTS, subagentsMiddleware } from "../subagents/middleware.js";
import type { SubagentsSetup } from "../subagents/types.js";
import type { UsageTarget } from "../usage.js";
import { CLARIFICATION, clarificationMiddleware } from "./clarification.js";
import { DANGLING_TOOL_CALLS, danglingToolCallsMiddleware } from "./dangling-tool-calls.js";
import { DYNAMIC_CONTEXT, dynamicContextMiddleware } from "./dynamic-context.js";
import { GUARDRAILS, type GuardrailsOptions, guardrailsMiddleware } from "./guardrails.js";
import { LOOP_DETECTION, loopDetectionMiddleware } from "./loop-detection.js";
import { MEMORY, type MemoryMiddlewareOptions, memoryMiddleware } from "./memory.js";
import { MESSAGE_ID_GUARD, messageIdGuardMiddleware } from "./message-id-guard.js";
import { PLAN_MODE, planModeMiddleware } from "./plan-mode.js";
import { SKILLS, skillsMiddleware } from "./skills.js";
import { antlerSummarizationMiddleware, SUMMARIZATION } from "./summarization.js";
import { TITLE, titleMiddleware } from "./title.js";
import { type RunBudget, TOKEN_BUDGET, tokenBudgetMiddleware } from "./token-budget.js";
import { TOOL_ERRORS, toolErrorsMiddleware } from "./tool-errors.js";

/** `true` turns a feature on with its defaults, `false` off; a middleware instance replaces it. */
export type FeatureSetting = boolean | AgentMiddleware;

/**
 * Which middlewares of the chain run. Unset keys take DeerFlow's defaults: loop detection on, the
 * rest off, except that guardrails, skills and token budgets are on when their settings are given.
 */
export interface RuntimeFeatures {
  /** Placeholder results for unanswered tool calls before each model call. */
  danglingToolCalls?: FeatureSetting;
  /**
   * Tool calls checked against a policy before they run; a refused one does not run and the model
   * reads why (guardrails.ts). The built-in takes `FeatureOptions.guardrails`; on when they are given.
   */
  guardrails?: FeatureSetting;
  /** A throwing tool becomes an error ToolMessage and the run goes on. */
  toolErrors?: FeatureSetting;
  /** New ids for model responses whose id repeats an earlier message. */
  messageIdGuard?: FeatureSetting;
  /** Date and user added to the newest user message of each model request. */
  dynamicContext?: FeatureSetting;
  /**
   * The skills' list in the system prompt and the tools that load one (skills.ts). The built-in
   * takes `FeatureOptions.skills`; on when there are some.
   */
  skills?: FeatureSetting;
  /** Older history summarized when it grows long (langchain's built-in). */
  summarization?: FeatureSetting;
  /** A to-do list the agent keeps (`write_todos`); the chat shows it as the plan. Off by default. */
  planMode?: FeatureSetting;
  /** The first turn names the thread. */
  title?: FeatureSetting;
  /**
   * Memory per person: remembered facts in the newest user message's context block, a turn's
   * facts read after its final answer, and the memory tools. The built-in needs `memory` (a
   * `MemoryBook` over a store) passed to `createAntlerAgent`.
   */
  memory?: FeatureSetting;
  /** The `task` tool, which runs the subagents given to `createAntlerAgent` (`subagents`). Off by default. */
  subagents?: FeatureSetting;
  /** Warn on, then stop, repeated identical tool calls. On by default. */
  loopDetection?: FeatureSetting;
  /**
   * Limits on one run's tool calls and tokens: a warning near them, tool calls stopped at them
   * (token-budget.ts). The built-in takes `FeatureOptions.budget`; on when it is given.
   */
  tokenBudget?: FeatureSetting;
  /**
   * Tool approval (`approvalMiddleware` in approvals.ts): pauses chosen tool calls for a person's
   * decision. Placed after the extras, right before clarification. Absent: no call waits.
   */
  approvals?: AgentMiddleware;
  /** Replaces the clarification middleware (it stays last and cannot be switched off). */
  clarification?: AgentMiddleware;
}

/** What the built-ins of the features that need settings are built with. */
export interface FeatureOptions {
  /** Allow and deny lists, and a policy of your own, for `guardrails`. */
  guardrails?: GuardrailsOptions;
  /** The skills for `skills`. */
  skills?: readonly Skill[];
  /** The limits for `tokenBudget`. */
  budget?: RunBudget;
  /** What the built-in `task` tool of `subagents` runs. */
  subagents?: SubagentsSetup;
  /** What the built-in `memory` is made of: the book over a store, the extraction model. */
  memory?: MemoryMiddlewareOptions;
}

/** A middleware placed directly after or before a named one of the chain (or of another extra). */
export interface PlacedMiddleware {
  middleware: AgentMiddleware;
  after?: string;
  before?: string;
}

/** An extra middleware: a bare one goes right before clarification. */
export type ExtraMiddleware = AgentMiddleware | PlacedMiddleware;

type Slot = { key: Exclude<keyof RuntimeFeatures, "clarification" | "approvals">; name: string; make: () => AgentMiddleware };

function slots(model: BaseChatModel | undefined, usage: UsageTarget | undefined, options: FeatureOptions): Slot[] {
  const needModel = (what: string) => {
    if (!model) throw new AntlerError("agent_invalid", `the ${what} feature needs a model`);
    return model;
  };
  const need = <K extends keyof FeatureOptions>(key: K, what: string): NonNullable<FeatureOptions[K]> => {
    const value = options[key];
    if (value === undefined) throw new AntlerError("agent_invalid", `the ${what} feature needs its settings (${key})`);
    return value as NonNullable<FeatureOptions[K]>;
  };
  return [
    { key: "danglingToolCalls", name: DANGLING_TOOL_CALLS, make: danglingToolCallsMiddleware },
    { key: "guardrails", name: GUARDRAILS, make: () => guardrailsMiddleware(need("guardrails", "guardrails")) },
    { key: "toolErrors", name: TOOL_ERRORS, make: toolErrorsMiddleware },
    { key: "messageIdGuard", name: MESSAGE_ID_GUARD, make: messageIdGuardMiddleware },
    { key: "dynamicContext", name: DYNAMIC_CONTEXT, make: () => dynamicContextMiddleware() },
    { key: "skills", name: SKILLS, make: () => skillsMiddleware(need("skills", "skills")) },
    {
      key: "summarization",
      name: SUMMARIZATION,
      make: () => antlerSummarizationMiddleware({ model: needModel("summarization"), usage }),
    },
    { key: "planMode", name: PLAN_MODE, make: () => planModeMiddleware() },
    { key: "title", name: TITLE, make: () => titleMiddleware({ model, usage }) },
    {
      key: "memory",
      name: MEMORY,
      make: () => {
        const memory = options.memory;
        if (!memory)
          throw new AntlerError("agent_invalid", "the memory feature needs a memory book: pass `memory` to createAntlerAgent");
        return memoryMiddleware(memory);
      },
    },
    {
      key: "subagents",
      name: SUBAGENTS,
      make: () => {
        const subagents = options.subagents;
        if (!subagents?.agents.length) throw new AntlerError("agent_invalid", "the subagents feature needs subagents to run");
        return subagentsMiddleware({ setup: subagents, model: needModel("subagents"), usage });
      },
    },
    { key: "loopDetection", name: LOOP_DETECTION, make: () => loopDetectionMiddleware() },
    { key: "tokenBudget", name: TOKEN_BUDGET, make: () => tokenBudgetMiddleware(need("budget", "token budget")) },
  ];
}

/** Unset switches: loop detection on (DeerFlow's default); the features with settings on when they are given. */
function defaultOn(key: Slot["key"], options: FeatureOptions): boolean {
  if (key === "guardrails") return options.guardrails !== undefined;
  if (key === "skills") return (options.skills?.length ?? 0) > 0;
  if (key === "tokenBudget") return options.budget !== undefined;
  return key === "loopDetection";
}

/**
 * The chain for `features`, in DeerFlow order, extras placed, then tool approval, clarification last. `usage` is where
 * the built-in title, summarization and subagents report their model calls (a middleware instance
 * passed as a feature reports only if it was built with one); `options` what guardrails, skills,
 * budgets, subagents and memory are built with.
 */
export function buildMiddlewareChain(
  features: RuntimeFeatures = {},
  extras: readonly ExtraMiddleware[] = [],
  model?: BaseChatModel,
  usage?: UsageTarget,
  options: FeatureOptions = {},
): AgentMiddleware[] {
  const chain: AgentMiddleware[] = [];
  for (const slot of slots(model, usage, options)) {
    const setting = features[slot.key] ?? defaultOn(slot.key, options);
    if (setting === false) continue;
    chain.push(setting === true ? slot.make() : setting);
  }
  const placed = placeExtras(chain, extras.map(normalizeExtra));
  if (features.approvals) placed.push(features.approvals);
  placed.push(features.clarification ?? clarificationMiddleware());
  assertUniqueNames(placed);
  return placed;
}

function normalizeExtra(extra: ExtraMiddleware): PlacedMiddleware {
  return "middleware" in extra && typeof extra.middleware === "object" && extra.middleware !== null
    ? (extra as PlacedMiddleware)
    : { middleware: extra as AgentMiddleware };
}

function placeExtras(base: AgentMiddleware[], extras: PlacedMiddleware[]): AgentMiddleware[] {
  const list = [...base];
  const known = new Set([...base.map((m) => m.name), ...extras.map((e) => e.middleware.name), CLARIFICATION]);
  for (const e of extras) {
    for (const anchor of [e.after, e.before]) {
      if (anchor !== undefined && !known.has(anchor)) {
        throw new AntlerError(
          "agent_invalid",
          `middleware ${e.middleware.name}: unknown anchor "${anchor}"; known: ${[...known].join(", ")}`,
        );
      }
    }
    if (e.after === CLARIFICATION) {
      throw new AntlerError(
        "agent_invalid",
        `middleware ${e.middleware.name}: nothing can come after ${CLARIFICATION}, it is always last`,
      );
    }
  }
  let pending = extras;
  while (pending.length > 0) {
    const waiting: PlacedMiddleware[] = [];
    for (const e of pending) if (!tryPlace(list, e)) waiting.push(e);
    if (waiting.length === pending.length) {
      const names = waiting.map((e) => `${e.middleware.name} (${e.after ? `after ${e.after}` : `before ${e.before}`})`);
      throw new AntlerError("agent_invalid", `middleware anchors form a cycle: ${names.join(", ")}`);
    }
    pending = waiting;
  }
  return list;
}

/** Inserts `e` when its anchors are in the list; false when it has to wait for another extra. */
function tryPlace(list: AgentMiddleware[], e: PlacedMiddleware): boolean {
  const at = (name: string | undefined) => (name === CLARIFICATION ? list.length : list.findIndex((m) => m.name === name));
  const after = e.after === undefined ? undefined : at(e.after);
  const before = e.before === undefined ? undefined : at(e.before);
  if (after === -1 || before === -1) return false;
  if (after !== undefined && before !== undefined && after >= before) {
    throw new AntlerError(
      "agent_invalid",
      `middleware ${e.middleware.name}: conflicting anchors, ${e.after} does not come before ${e.before}`,
    );
  }
  const index = after !== undefined ? after + 1 : before !== undefined ? before : list.length;
  list.splice(index, 0, e.middleware);
  return true;
}

function assertUniqueNames(chain: readonly AgentMiddleware[]): void {
  const seen = new Set<string>();
  for (const m of chain) {
    if (seen.has(m.name)) throw new AntlerError("agent_invalid", `two middlewares are named ${m.name}; names must be unique`);
    seen.add(m.name);
  }
}
