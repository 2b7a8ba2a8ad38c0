/**
 * The one place config is read: file → YAML → `${VAR}` interpolation → zod → typed AppConfig.
 * Every problem found is collected and reported together, one line each, with its key path.
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { parseDocument } from "yaml";
import type { z } from "zod";
import { ConfigError, type ConfigIssue } from "../errors.js";
import { type Env, formatPath, interpolate } from "./interpolate.js";
import { type AppConfig, AppConfigSchema } from "./schema.js";

export interface LoadedConfig {
  config: AppConfig;
  /** Absolute path of the file read. */
  path: string;
  /** Folder of that file: relative `use:` paths and `storage.path` resolve against it. */
  baseDir: string;
  /** Every secret value in the config, so the logger can scrub them. */
  secrets: string[];
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
  const config = parseConfig(text, options.env, file);
  return { config, path: file, baseDir: path.dirname(file), secrets: collectSecrets(config) };
}

/** Parses and validates config text. `source` names the file in syntax errors. */
export function parseConfig(text: string, env: Env, source = "config"): AppConfig {
  const doc = parseDocument(text, { prettyErrors: true, uniqueKeys: true });
  if (doc.errors.length > 0) {
    throw new ConfigError(
      doc.errors.map((e) => {
        const at = e.linePos?.[0];
        const where = at ? `${source}:${at.line}:${at.col}` : source;
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
  const expanded = interpolate(raw, env, issues);
  if (issues.length > 0) throw new ConfigError(issues);
  return validate(AppConfigSchema, expanded, []);
}

/** Runs a zod schema and turns its failures into a ConfigError with key paths under `prefix`. */
export function validate<S extends z.ZodType>(schema: S, value: unknown, prefix: (string | number)[]): z.output<S> {
  const result = schema.safeParse(value, { reportInput: true });
  if (result.success) return result.data;
  throw new ConfigError(result.error.issues.flatMap((issue) => describeIssue(issue, prefix)));
}

function describeIssue(issue: z.core.$ZodIssue, prefix: (string | number)[]): ConfigIssue[] {
  const at = [...prefix, ...(issue.path as (string | number)[])];
  switch (issue.code) {
    case "unrecognized_keys":
      return issue.keys.map((key) => ({
        path: formatPath([...at, key]),
        message: "unknown key: remove it or check its spelling against config.example.yaml",
      }));
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
