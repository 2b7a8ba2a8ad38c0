/**
 * Reflection: turn a `"module:Export"` string from the config into a live value.
 *
 * This is how models, tools and channels are plugged in without touching the core: the config
 * names a module (a package, or a file relative to the config) and an export inside it.
 */
import path from "node:path";
import { pathToFileURL } from "node:url";
import { ReflectionError } from "../errors.js";

export interface ResolveOptions {
  /** Folder that relative module paths resolve against: the config file's folder. */
  baseDir?: string;
}

// biome-ignore lint/suspicious/noExplicitAny: a class of any constructor signature
export type AnyClass = abstract new (...args: any[]) => unknown;

const FORM = '"module:Export" (for example "@langchain/openai:ChatOpenAI" or "./my-channel.js:MyChannel")';

/** Splits `"module:Export"` at the last colon, so scoped and absolute paths keep theirs. */
export function parsePath(spec: string): { module: string; exportPath: string[] } {
  const at = spec.lastIndexOf(":");
  if (at <= 0 || at === spec.length - 1) {
    throw new ReflectionError("reflection_bad_path", `Invalid path "${spec}": expected the form ${FORM}`);
  }
  const exportName = spec.slice(at + 1);
  return { module: spec.slice(0, at), exportPath: exportName.split(".") };
}

/** The npm package a bare specifier belongs to: `@scope/name/sub` → `@scope/name`. */
export function packageOf(specifier: string): string {
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : (parts[0] ?? specifier);
}

function isRelative(specifier: string): boolean {
  return specifier.startsWith("./") || specifier.startsWith("../") || specifier === "." || specifier === "..";
}

function toImportable(specifier: string, baseDir: string | undefined): string {
  // import() resolves relative paths against this file, not the config: make them absolute first.
  if (isRelative(specifier)) return pathToFileURL(path.resolve(baseDir ?? process.cwd(), specifier)).href;
  if (path.isAbsolute(specifier)) return pathToFileURL(specifier).href;
  return specifier;
}

const MISSING_PACKAGE = /Cannot find (?:package|module) '([^']+)'(?: imported from (\S+))?/;

function importFailure(spec: string, moduleName: string, err: unknown): ReflectionError {
  const code = (err as { code?: string } | null)?.code;
  const text = err instanceof Error ? err.message : String(err);
  const match = MISSING_PACKAGE.exec(text);
  if ((code === "ERR_MODULE_NOT_FOUND" || code === "MODULE_NOT_FOUND") && match?.[1]) {
    const missing = match[1];
    if (isRelative(moduleName) || path.isAbsolute(moduleName)) {
      if (path.isAbsolute(missing) || missing.startsWith("file:")) {
        return new ReflectionError("reflection_module_not_found", `Cannot import "${spec}": file ${missing} does not exist`, {
          cause: err,
        });
      }
    }
    const pkg = packageOf(missing);
    if (!isRelative(moduleName) && !path.isAbsolute(moduleName) && pkg === packageOf(moduleName)) {
      return new ReflectionError(
        "reflection_package_missing",
        `Cannot import "${spec}": package ${pkg} is not installed. Install it with: npm install ${pkg}`,
        { cause: err },
      );
    }
    const needer = match[2] ? ` (imported from ${match[2]})` : "";
    return new ReflectionError(
      "reflection_dependency_missing",
      `Cannot import "${spec}": module ${moduleName} needs package ${pkg}, which is not installed${needer}. Install it with: npm install ${pkg}`,
      { cause: err },
    );
  }
  return new ReflectionError(
    "reflection_import_failed",
    `Cannot import "${spec}": module ${moduleName} failed to load: ${text}`,
    {
      cause: err,
    },
  );
}

function exportedNames(mod: Record<string, unknown>): string {
  const names = Object.keys(mod).filter((k) => k !== "__esModule");
  return names.length > 0 ? names.sort().join(", ") : "(nothing)";
}

/** Imports the module part of `spec` and returns its export. Checks `instanceof expected` when given. */
export async function resolveVariable<T = unknown>(
  spec: string,
  expected?: AnyClass | null,
  options: ResolveOptions = {},
): Promise<T> {
  const { module: moduleName, exportPath } = parsePath(spec);
  let mod: Record<string, unknown>;
  try {
    mod = (await import(toImportable(moduleName, options.baseDir))) as Record<string, unknown>;
  } catch (err) {
    throw importFailure(spec, moduleName, err);
  }
  let value: unknown = mod;
  for (const [i, key] of exportPath.entries()) {
    const holder = value as Record<string, unknown> | null | undefined;
    if (holder == null || !(key in Object(holder))) {
      const where = i === 0 ? `module ${moduleName}` : `${moduleName}:${exportPath.slice(0, i).join(".")}`;
      const has = i === 0 ? ` It exports: ${exportedNames(mod)}` : "";
      throw new ReflectionError("reflection_export_missing", `Cannot import "${spec}": ${where} has no export "${key}".${has}`);
    }
    value = holder[key];
  }
  if (expected && !(value instanceof expected)) {
    throw new ReflectionError(
      "reflection_wrong_type",
      `"${spec}" is not an instance of ${expected.name} (got ${describe(value)})`,
    );
  }
  return value as T;
}

/** True when `value` can be called with `new`. */
export function isClass(value: unknown): value is AnyClass {
  return typeof value === "function" && value.prototype !== undefined && value.prototype.constructor === value;
}

/**
 * Like {@link resolveVariable}, but the export must be a class, and a subclass of `baseClass`
 * (or the class itself) unless `baseClass` is null.
 */
export async function resolveClass<T extends AnyClass = AnyClass>(
  spec: string,
  baseClass: AnyClass | null,
  options: ResolveOptions = {},
): Promise<T> {
  const value = await resolveVariable(spec, null, options);
  if (!isClass(value)) {
    throw new ReflectionError("reflection_not_class", `"${spec}" is not a class (got ${describe(value)})`);
  }
  if (baseClass && value !== baseClass && !(value.prototype instanceof baseClass)) {
    throw new ReflectionError(
      "reflection_not_subclass",
      `"${spec}" (class ${value.name}) is not a subclass of ${baseClass.name}`,
    );
  }
  return value as T;
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (typeof value === "function") return `function ${value.name || "(anonymous)"}`;
  if (typeof value === "object") return `object ${(value as object).constructor?.name ?? "Object"}`;
  return typeof value;
}
