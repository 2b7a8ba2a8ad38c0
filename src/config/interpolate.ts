/**
 * `${VAR}` and `${VAR:-default}` substitution inside every string of a parsed YAML tree.
 * The environment is passed in, so this module never reads the process environment itself.
 */
import type { ConfigIssue } from "../errors.js";

const REF = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

export type Env = Readonly<Record<string, string | undefined>>;

/** Formats a key path the way error messages show it: `models[0].use`, `channels.slack.bot_token`. */
export function formatPath(path: ReadonlyArray<string | number | symbol>): string {
  let out = "";
  for (const part of path) {
    if (typeof part === "number") out += `[${part}]`;
    else out += out ? `.${String(part)}` : String(part);
  }
  return out;
}

/**
 * Which environment variable each interpolated key read, by key path (`models[0].base_url` →
 * `OPENAI_BASE_URL`): fix hints name a variable only where the config really reads one.
 */
export type EnvSources = Record<string, string>;

/**
 * Returns a copy of `value` with every `${…}` replaced; unset variables without a default become
 * issues. Each key whose value names a variable is recorded in `sources` (the first variable).
 */
export function interpolate(
  value: unknown,
  env: Env,
  issues: ConfigIssue[],
  path: (string | number)[] = [],
  sources: EnvSources = {},
): unknown {
  if (typeof value === "string") return interpolateString(value, env, issues, path, sources);
  if (Array.isArray(value)) return value.map((v, i) => interpolate(v, env, issues, [...path, i], sources));
  if (value && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = interpolate(v, env, issues, [...path, k], sources);
    return out;
  }
  return value;
}

function interpolateString(
  text: string,
  env: Env,
  issues: ConfigIssue[],
  path: (string | number)[],
  sources: EnvSources,
): string {
  return text.replace(REF, (_whole, name: string, fallback: string | undefined) => {
    sources[formatPath(path)] ??= name;
    const set = env[name];
    if (set !== undefined && set !== "") return set;
    if (fallback !== undefined) return fallback;
    issues.push({
      path: formatPath(path),
      message: `environment variable ${name} is not set: export ${name}=… or write \${${name}:-default} in the config`,
    });
    return "";
  });
}
