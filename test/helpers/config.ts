/** Config test helper: the issues a config text is refused with. */
import { expect } from "vitest";
import { parseConfig } from "../../src/config/loader.js";
import { ConfigError } from "../../src/errors.js";

/** Each issue of the ConfigError `text` is refused with, as `path: message`; fails if it is accepted. */
export function configIssues(text: string, env: Record<string, string> = {}): string[] {
  try {
    parseConfig(text, env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).issues.map((i) => `${i.path}: ${i.message}`);
  }
  throw new Error("expected a ConfigError");
}
