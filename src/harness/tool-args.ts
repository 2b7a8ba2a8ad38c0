/**
 * Checks a tool call's arguments against the tool's schema (zod or JSON schema) before an edited
 * call runs, and says what is wrong in a sentence a chat user can act on.
 */
import { toJsonSchema, Validator } from "@langchain/core/utils/json_schema";

/** How many problems one message lists. */
const MAX_PROBLEMS = 3;

interface OutputUnit {
  instanceLocation: string;
  keyword: string;
  error: string;
}

/** `#/to/0` → `to[0]`; the root is "the arguments". */
function where(location: string): string {
  const parts = location.replace(/^#\/?/, "").split("/").filter(Boolean);
  if (parts.length === 0) return "the arguments";
  return parts.map((p, i) => (/^\d+$/.test(p) ? `[${p}]` : i === 0 ? p : `.${p}`)).join("");
}

/** One readable line per leaf problem; the validator's wrapper errors ("does not match schema") are left out. */
function describe(unit: OutputUnit): string | undefined {
  if (["properties", "items", "prefixItems", "false", "allOf", "$ref"].includes(unit.keyword)) return undefined;
  if (unit.keyword === "required") {
    const missing = /property "([^"]+)"/.exec(unit.error)?.[1];
    return missing ? `${missing} is missing` : unit.error;
  }
  if (unit.keyword === "additionalProperties") {
    const extra = /Property "([^"]+)"/.exec(unit.error)?.[1];
    return extra ? `${extra} is not an argument of this tool` : unit.error;
  }
  if (unit.keyword === "type") {
    const expected = /Expected "([^"]+)"/.exec(unit.error)?.[1];
    return expected ? `${where(unit.instanceLocation)} must be ${expected === "integer" ? "an" : "a"} ${expected}` : unit.error;
  }
  return `${where(unit.instanceLocation)}: ${unit.error.replace(/^Instance /, "").replace(/\.$/, "")}`;
}

/**
 * Undefined when `args` fit `schema`, else one sentence naming the tool and what is wrong. No
 * schema accepts any object.
 */
export async function checkToolArgs(toolName: string, schema: unknown, args: unknown): Promise<string | undefined> {
  if (!args || typeof args !== "object" || Array.isArray(args)) {
    return `The arguments of ${toolName} must be a JSON object, like {"name": "value"}.`;
  }
  if (!schema || typeof schema !== "object") return undefined;
  let json: object;
  try {
    json = toJsonSchema(schema as Parameters<typeof toJsonSchema>[0]) as object;
  } catch {
    return undefined; // a schema we cannot read: the tool checks its own input
  }
  const result = new Validator(json as never, "2020-12", false).validate(args);
  if (result.valid) return undefined;
  const problems = [...new Set((result.errors as OutputUnit[]).map(describe).filter((p): p is string => !!p))];
  const shown = problems.slice(0, MAX_PROBLEMS).join("; ");
  const more = problems.length > MAX_PROBLEMS ? ` (and ${problems.length - MAX_PROBLEMS} more)` : "";
  return `Invalid arguments for ${toolName}: ${shown || "they do not match the tool's schema"}${more}.`;
}
