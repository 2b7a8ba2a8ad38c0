/**
 * A tool-call policy of your own (`agent.guardrails.use`), asked about every call the lists let
 * through. `"module:Export"` (relative to the config file, or a package) names one of:
 * - a function `(call) => verdict`;
 * - an object with `evaluate(call)`;
 * - a class with `evaluate(call)`, built once with `agent.guardrails.options`.
 * A verdict is `true`/`false` or `{ allow, reason? }`, or a promise of one; `reason` is what the
 * model reads when the call is refused.
 */
import { ConfigError, errorMessage } from "../../errors.js";
import { resolveVariable } from "../../reflection/index.js";
import type { GuardedCall, Verdict } from "./rules.js";

/** What a policy answers. */
export type GuardrailVerdict = boolean | { allow: boolean; reason?: string };

/** A policy object (or an instance of a policy class). */
export interface GuardrailPolicy {
  evaluate(call: GuardedCall): GuardrailVerdict | Promise<GuardrailVerdict>;
}

/** A policy function. */
export type GuardrailPolicyFn = (call: GuardedCall) => GuardrailVerdict | Promise<GuardrailVerdict>;

/** A policy as the middleware takes it. */
export type PolicyLike = GuardrailPolicy | GuardrailPolicyFn;

/** Asks `policy` about `call`, its answer in the one shape. */
export async function askPolicy(policy: PolicyLike, call: GuardedCall): Promise<Verdict> {
  const answer = typeof policy === "function" ? await policy(call) : await policy.evaluate(call);
  const allow = typeof answer === "boolean" ? answer : answer?.allow === true;
  if (allow) return { allow: true };
  const reason =
    typeof answer === "object" && answer?.reason ? answer.reason : `The policy does not allow this ${call.tool} call.`;
  return { allow: false, reason };
}

/** Loads `use:`; every failure is a ConfigError on `key` (`agent.guardrails.use`). */
export async function loadPolicy(
  spec: string,
  options: { baseDir: string; key: string; settings?: Record<string, unknown> },
): Promise<PolicyLike> {
  let value: unknown;
  try {
    value = await resolveVariable(spec, null, { baseDir: options.baseDir });
  } catch (err) {
    throw new ConfigError([
      { path: options.key, message: `${errorMessage(err)}: fix the path, written "module:Export" relative to the config file` },
    ]);
  }
  try {
    const policy = policyOf(value, options.settings ?? {});
    if (policy) return policy;
  } catch (err) {
    throw new ConfigError([{ path: options.key, message: `the policy class failed to build: ${errorMessage(err)}` }]);
  }
  throw new ConfigError([
    {
      path: options.key,
      message: `"${spec}" is not a policy: export a function (call) => verdict, an object with evaluate(call), or a class with evaluate(call)`,
    },
  ]);
}

function policyOf(value: unknown, settings: Record<string, unknown>): PolicyLike | undefined {
  if (typeof value === "function") {
    const proto = (value as { prototype?: { evaluate?: unknown } }).prototype;
    if (typeof proto?.evaluate === "function") {
      return new (value as new (settings: Record<string, unknown>) => GuardrailPolicy)(settings);
    }
    return value as GuardrailPolicyFn;
  }
  if (value && typeof value === "object" && typeof (value as GuardrailPolicy).evaluate === "function") {
    return value as GuardrailPolicy;
  }
  return undefined;
}
