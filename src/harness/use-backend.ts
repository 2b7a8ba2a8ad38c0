/**
 * A backend of your own: `backend: "./my-harness.js:MyHarness"` (relative to the config file, or
 * a package) names a class implementing `Harness` (types.ts). It is loaded by reflection, checked
 * for the methods `Harness` requires, and constructed with a `HarnessContext`. Every failure is a
 * ConfigError naming the agent's `backend` key and the fix.
 */
import type { AgentConfig, AppConfig } from "../config/schema.js";
import { ConfigError, errorMessage } from "../errors.js";
import type { Logger } from "../log/logger.js";
import { resolveClass } from "../reflection/index.js";
import type { BackendFactory } from "./backend-factory.js";
import { type Harness, REQUIRED_HARNESS_METHODS } from "./types.js";
import type { UsageSink } from "./usage.js";

/** What the constructor of a backend of your own is given. */
export interface HarnessContext {
  /** The agent's config section (`agent`, or `agents.<name>`), parsed, with its defaults. */
  settings: AgentConfig;
  /** The section's `options:` as written: your backend's own settings ({} when absent). */
  options: Record<string, unknown>;
  /** The whole loaded config (models, storage, ...). */
  config: AppConfig;
  /** The agent's logger. */
  logger: Logger;
  /** Folder of the config file, which relative paths resolve against. */
  baseDir: string;
  /** Takes the token usage of the model calls the agent makes, if the backend reports any (see usage.ts). */
  onUsage?: UsageSink;
}

/** A class implementing `Harness`, as `backend: "module:Export"` names it. */
export type HarnessClass = new (context: HarnessContext) => Harness;

/** The backend factory of the class `spec` names. */
export function useBackend(spec: string): BackendFactory {
  return async ({ config, settings, section = "agent", baseDir, logger, onUsage }) => {
    const refuse = (message: string) =>
      new ConfigError([{ path: `${section}.backend`, message: `${message} (${section}.backend is "${spec}")` }]);
    let cls: HarnessClass;
    try {
      cls = (await resolveClass(spec, null, { baseDir })) as unknown as HarnessClass;
    } catch (err) {
      throw refuse(`${errorMessage(err)}: fix the path, written "module:Export" relative to the config file`);
    }
    const prototype = cls.prototype as unknown as Record<string, unknown>;
    const missing = REQUIRED_HARNESS_METHODS.filter((m) => typeof prototype[m] !== "function");
    if (missing.length > 0) {
      throw refuse(`is not a harness: it lacks ${missing.map((m) => `${m}()`).join(", ")} (see the Harness interface)`);
    }
    let harness: Harness;
    try {
      harness = new cls({ settings, options: settings.options ?? {}, config, logger, baseDir, ...(onUsage ? { onUsage } : {}) });
    } catch (err) {
      throw refuse(`the harness constructor failed: ${errorMessage(err)}`);
    }
    logger.info({ backend: spec }, "agent ready");
    return harness;
  };
}
