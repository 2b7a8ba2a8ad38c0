/**
 * Old config names that still work. A key or value that was renamed is rewritten to its new name
 * before the schema checks the section, and each rewrite yields a deprecation warning that names
 * the new spelling. Writing both the old and the new key is an error: which one was meant?
 */
import { ConfigError, type ConfigIssue } from "../errors.js";
import { formatPath } from "./interpolate.js";

/** What a section renamed: `keys` old → new; `values` per (new) key, old value → new value. */
export interface ConfigRenames {
  keys?: Readonly<Record<string, string>>;
  values?: Readonly<Record<string, Readonly<Record<string, string>>>>;
}

export interface Renamed {
  section: Record<string, unknown>;
  /** One line per old name used, e.g. "channels.slack.api_url is deprecated: rename it to api_base". */
  warnings: string[];
}

/** Rewrites the old names in `section` (at key path `at`) to the new ones. */
export function applyRenames(section: Record<string, unknown>, renames: ConfigRenames, at: string[]): Renamed {
  const out: Record<string, unknown> = { ...section };
  const warnings: string[] = [];
  const issues: ConfigIssue[] = [];
  for (const [old, now] of Object.entries(renames.keys ?? {})) {
    if (!(old in out)) continue;
    if (now in out) {
      issues.push({ path: formatPath([...at, old]), message: `is the old name of ${now}, which is set too: remove ${old}` });
      continue;
    }
    out[now] = out[old];
    delete out[old];
    warnings.push(`${formatPath([...at, old])} is deprecated: rename it to ${now}`);
  }
  for (const [key, values] of Object.entries(renames.values ?? {})) {
    const value = out[key];
    if (typeof value !== "string" || !(value in values)) continue;
    out[key] = values[value];
    warnings.push(`${formatPath([...at, key])}: ${value} is deprecated: write ${key}: ${values[value]}`);
  }
  if (issues.length > 0) throw new ConfigError(issues);
  return { section: out, warnings };
}
