/**
 * The middleware chain in DeerFlow's order, built from feature switches, with extra middlewares
 * placed relative to named ones. Clarification is always last.
 */
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { AgentMiddleware } from "langchain";
import { AntlerError } from "../../errors.js";
import type { UsageTarget } from "../usage.js";
import { CLARIFICATION, clarificationMiddleware } from "./clarification.js";
import { DANGLING_TOOL_CALLS, danglingToolCallsMiddleware } from "./dangling-tool-calls.js";
import { DYNAMIC_CONTEXT, dynamicContextMiddleware } from "./dynamic-context.js";
import { LOOP_DETECTION, loopDetectionMiddleware } from "./loop-detection.js";
import { MEMORY, type MemoryMiddlewareOptions, memoryMiddleware } from "./memory.js";
import { MESSAGE_ID_GUARD, messageIdGuardMiddleware } from "./message-id-guard.js";
import { antlerSummarizationMiddleware, SUMMARIZATION } from "./summarization.js";
import { TITLE, titleMiddleware } from "./title.js";
import { TOOL_ERRORS, toolErrorsMiddleware } from "./tool-errors.js";

/** `true` turns a feature on with its defaults, `false` off; a middleware instance replaces it. */
export type FeatureSetting = boolean | AgentMiddleware;

/** Which middlewares of the chain run. Unset keys take DeerFlow's defaults: loop detection on, the rest off. */
export interface RuntimeFeatures {
  /** Placeholder results for unanswered tool calls before each model call. */
  danglingToolCalls?: FeatureSetting;
  /** A throwing tool becomes an error ToolMessage and the run goes on. */
  toolErrors?: FeatureSetting;
  /** New ids for model responses whose id repeats an earlier message. */
  messageIdGuard?: FeatureSetting;
  /** Date and user added to the newest user message of each model request. */
  dynamicContext?: FeatureSetting;
  /** Older history summarized when it grows long (langchain's built-in). */
  summarization?: FeatureSetting;
  /** The first turn names the thread. */
  title?: FeatureSetting;
  /**
   * Memory per person: remembered facts in the newest user message's context block, a turn's
   * facts read after its final answer, and the memory tools. The built-in needs `memory` (a
   * `MemoryBook` over a store) passed to `createAntlerAgent`.
   */
  memory?: FeatureSetting;
  /** Warn on, then stop, repeated identical tool calls. On by default. */
  loopDetection?: FeatureSetting;
  /**
   * Tool approval (`approvalMiddleware` in approvals.ts): pauses chosen tool calls for a person's
   * decision. Placed after the extras, right before clarification. Absent: no call waits.
   */
  approvals?: AgentMiddleware;
  /** Replaces the clarification middleware (it stays last and cannot be switched off). */
  clarification?: AgentMiddleware;
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

function slots(model: BaseChatModel | undefined, usage: UsageTarget | undefined, memory?: MemoryMiddlewareOptions): Slot[] {
  const needModel = (what: string) => {
    if (!model) throw new AntlerError("agent_invalid", `the ${what} feature needs a model`);
    return model;
  };
  return [
    { key: "danglingToolCalls", name: DANGLING_TOOL_CALLS, make: danglingToolCallsMiddleware },
    { key: "toolErrors", name: TOOL_ERRORS, make: toolErrorsMiddleware },
    { key: "messageIdGuard", name: MESSAGE_ID_GUARD, make: messageIdGuardMiddleware },
    { key: "dynamicContext", name: DYNAMIC_CONTEXT, make: () => dynamicContextMiddleware() },
    {
      key: "summarization",
      name: SUMMARIZATION,
      make: () => antlerSummarizationMiddleware({ model: needModel("summarization"), usage }),
    },
    { key: "title", name: TITLE, make: () => titleMiddleware({ model, usage }) },
    {
      key: "memory",
      name: MEMORY,
      make: () => {
        if (!memory)
          throw new AntlerError("agent_invalid", "the memory feature needs a memory book: pass `memory` to createAntlerAgent");
        return memoryMiddleware(memory);
      },
    },
    { key: "loopDetection", name: LOOP_DETECTION, make: () => loopDetectionMiddleware() },
  ];
}

const DEFAULT_ON = new Set<string>(["loopDetection"]);

/**
 * The chain for `features`, in DeerFlow order, extras placed, then tool approval, clarification last. `usage` is where
 * the built-in title and summarization report their model calls (a middleware instance passed as
 * a feature reports only if it was built with one); `memory` is what the built-in memory is made of.
 */
export function buildMiddlewareChain(
  features: RuntimeFeatures = {},
  extras: readonly ExtraMiddleware[] = [],
  model?: BaseChatModel,
  usage?: UsageTarget,
  memory?: MemoryMiddlewareOptions,
): AgentMiddleware[] {
  const chain: AgentMiddleware[] = [];
  for (const slot of slots(model, usage, memory)) {
    const setting = features[slot.key] ?? DEFAULT_ON.has(slot.key);
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
