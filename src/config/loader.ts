/**
 * The one place config is read: file → YAML → `${VAR}` interpolation → zod → typed AppConfig.
 * Every problem found is collected and reported together, one line each, with its key path.
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { parseDocument } from "yaml";
import type { z } from "zod";
import { ConfigError, type ConfigIssue } from "../errors.js";
import { type Env, type EnvSources, formatPath, interpolate } from "./interpolate.js";
import { type AppConfig, AppConfigSchema } from "./schema.js";
import { keysAt, nearest } from "./suggest.js";

export interface LoadedConfig {
  config: AppConfig;
  /** Absolute path of the file read. */
  path: string;
  /** Folder of that file: relative `use:` paths and `storage.path` resolve against it. */
  baseDir: string;
  /** Every secret value in the config, so the logger can scrub them. */
  secrets: string[];
  /** The environment variable each `${VAR}` key read, by key path (see `EnvSources`). */
  envSources: EnvSources;
}

export interface LoadOptions {
  /** Explicit file (`--config`); otherwise ./config.yaml, then ./config.example.yaml. */
  file?: string;
  env: Env;
  cwd?: string;
}

/** Which file `antler start` reads when no `--config` is given. */
export function findConfigFile(cwd: string, file?: string): string {
  if (file) return path.resolve(cwd, file);
  for (const name of ["config.yaml", "config.example.yaml"]) {
    const candidate = path.resolve(cwd, name);
    if (existsSync(candidate)) return candidate;
  }
  throw new ConfigError([
    { path: "", message: `no config file: create config.yaml (copy config.example.yaml) in ${cwd} or pass --config FILE` },
  ]);
}

export function loadConfig(options: LoadOptions): LoadedConfig {
  const file = findConfigFile(options.cwd ?? process.cwd(), options.file);
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    throw new ConfigError([{ path: "", message: `cannot read ${file}: ${(err as Error).message}` }], { cause: err });
  }
  const envSources: EnvSources = {};
  const config = parseConfig(text, options.env, file, envSources);
  return { config, path: file, baseDir: path.dirname(file), secrets: collectSecrets(config), envSources };
}

/**
 * Parses and validates config text. `source` names the file in syntax errors; `envSources`, when
 * given, is filled with the variable each interpolated key read.
 */
export function parseConfig(text: string, env: Env, source = "config", envSources: EnvSources = {}): AppConfig {
  const doc = parseDocument(text, { prettyErrors: true, uniqueKeys: true });
  if (doc.errors.length > 0) {
    throw new ConfigError(
      doc.errors.map((e) => {
        const at = e.linePos?.[0];
        const where = at ? `${source}:${at.line}:${at.col}` : source;
        if (e.code === "DUPLICATE_KEY") {
          const key = duplicateKeyAt(text, e.pos[0]);
          return { path: "", message: `${where}: the key ${key} appears twice in one mapping: keep one of them` };
        }
        return {
          path: "",
          message: `${where}: YAML syntax error: ${e.message.split("\n")[0]?.replace(/ at line \d+, column \d+:?$/, "")}: fix the YAML at that line`,
        };
      }),
    );
  }
  const raw = doc.toJS() ?? {};
  if (typeof raw !== "object" || Array.isArray(raw)) {
    throw new ConfigError([
      { path: "", message: `${source}: the top level must be a mapping of sections (server, models, channels, …)` },
    ]);
  }
  const issues: ConfigIssue[] = [];
  const expanded = interpolate(raw, env, issues, [], envSources);
  if (issues.length > 0) throw new ConfigError(issues);
  return validate(AppConfigSchema, expanded, []);
}

/** The key written at `offset` (where the YAML parser found it a second time), quoted. */
function duplicateKeyAt(text: string, offset: number): string {
  const match = /^["']?([^"':\n]+)/.exec(text.slice(offset));
  return match?.[1] ? `"${match[1].trim()}"` : "here";
}

/**
 * Runs a zod schema and turns its failures into a ConfigError with key paths under `prefix`.
 * `knownKeys` are keys the caller took out of `value` before validating (e.g. a channel's
 * `enabled`), still offered as suggestions for a misspelt key at the top.
 */
export function validate<S extends z.ZodType>(
  schema: S,
  value: unknown,
  prefix: (string | number)[],
  knownKeys: readonly string[] = [],
): z.output<S> {
  const result = schema.safeParse(value, { reportInput: true });
  if (result.success) return result.data;
  const context = { schema, prefix, knownKeys };
  throw new ConfigError(result.error.issues.flatMap((issue) => describeIssue(issue, context)));
}

interface IssueContext {
  schema: z.ZodType;
  prefix: (string | number)[];
  knownKeys: readonly string[];
}

/** "unknown key", with the nearest key the schema allows there when one is close. */
function unknownKey(key: string, inner: (string | number)[], context: IssueContext): string {
  const allowed = keysAt(context.schema, inner);
  const suggestion = nearest(key, inner.length === 0 ? [...allowed, ...context.knownKeys] : allowed);
  if (suggestion) return `unknown key: did you mean \`${suggestion}\`? rename it`;
  return "unknown key: remove it or check its spelling against config.example.yaml";
}

function describeIssue(issue: z.core.$ZodIssue, context: IssueContext): ConfigIssue[] {
  const inner = issue.path as (string | number)[];
  const at = [...context.prefix, ...inner];
  switch (issue.code) {
    case "unrecognized_keys":
      return issue.keys.map((key) => ({ path: formatPath([...at, key]), message: unknownKey(key, inner, context) }));
    case "invalid_type": {
      const missing = issue.input === undefined;
      return [
        {
          path: formatPath(at),
          message: missing
            ? `is required: add it (type ${issue.expected})`
            : `must be a ${issue.expected}, not ${kindOf(issue.input)}: change the value`,
        },
      ];
    }
    case "invalid_value":
      return [{ path: formatPath(at), message: `must be one of ${issue.values.map((v) => JSON.stringify(v)).join(", ")}` }];
    case "too_small":
    case "too_big":
      return [
        { path: formatPath(at), message: `${issue.message.replace(/^Too (small|big): expected \w+ to (have )?/, "must be ")}` },
      ];
    default:
      return [{ path: formatPath(at), message: issue.message }];
  }
}

function kindOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "a list";
  if (typeof value === "object") return "a mapping";
  return `${typeof value} ${JSON.stringify(value)}`;
}

const SECRET_KEY = /(token|secret|api_?key|password|encrypt_key|private_key|credential|authorization)/i;

/** Finds secret-bearing values (by key name) anywhere in the config. */
export function collectSecrets(config: unknown): string[] {
  const found = new Set<string>();
  const walk = (value: unknown, key: string) => {
    if (typeof value === "string") {
      if (SECRET_KEY.test(key) && value.length >= 4) found.add(value);
      // A URL may carry a password (storage.url: postgres://user:password@host/db).
      for (const password of passwordsIn(value)) if (password.length >= 4) found.add(password);
      return;
    }
    if (Array.isArray(value)) for (const v of value) walk(v, key);
    else if (value && typeof value === "object") for (const [k, v] of Object.entries(value)) walk(v, k);
  };
  walk(config, "");
  return [...found];
}

/** The password of a URL with credentials (`scheme://user:password@host`), as written and decoded. */
function passwordsIn(value: string): string[] {
  if (!/^[a-z][a-z0-9+.-]*:\/\/[^/@\s]*:[^/@\s]*@/i.test(value)) return [];
  try {
    const raw = new URL(value).password;
    if (!raw) return [];
    const decoded = decodeURIComponent(raw);
    return decoded === raw ? [raw] : [raw, decoded];
  } catch {
    return [];
  }
}
