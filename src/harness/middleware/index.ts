/** The middleware chain and each middleware, one file each. */
export {
  buildMiddlewareChain,
  type ExtraMiddleware,
  type FeatureOptions,
  type FeatureSetting,
  type PlacedMiddleware,
  type RuntimeFeatures,
} from "./chain.js";
export { CLARIFICATION, clarificationMiddleware } from "./clarification.js";
export { DANGLING_TOOL_CALLS, danglingToolCallsMiddleware, patchDanglingToolCalls } from "./dangling-tool-calls.js";
export { type AntlerRunContext, DYNAMIC_CONTEXT, dynamicContextMiddleware } from "./dynamic-context.js";
export { GUARDRAILS, type GuardrailsOptions, guardrailsMiddleware, refusalText } from "./guardrails.js";
export { LOOP_DETECTION, loopDetectionMiddleware, NOTICE_FLAG } from "./loop-detection.js";
export { MESSAGE_ID_GUARD, messageIdGuardMiddleware } from "./message-id-guard.js";
export { PLAN_MODE, planModeMiddleware } from "./plan-mode.js";
export { SKILLS, skillsMiddleware, skillsPrompt } from "./skills.js";
export { antlerSummarizationMiddleware, SUMMARIZATION } from "./summarization.js";
export { TITLE, titleMiddleware } from "./title.js";
export { LIMIT_FLAG, type RunBudget, spentInRun, TOKEN_BUDGET, tokenBudgetMiddleware } from "./token-budget.js";
export { TOOL_ERRORS, toolErrorsMiddleware } from "./tool-errors.js";
