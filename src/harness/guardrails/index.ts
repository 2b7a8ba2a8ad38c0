/** Guardrails: which tool calls may run (rules.ts), and a policy of your own (policy.ts). */
export {
  askPolicy,
  type GuardrailPolicy,
  type GuardrailPolicyFn,
  type GuardrailVerdict,
  loadPolicy,
  type PolicyLike,
} from "./policy.js";
export {
  checkRules,
  type GuardedCall,
  type GuardrailRules,
  matches,
  patternMatch,
  type ToolRule,
  type Verdict,
} from "./rules.js";
