/**
 * The SDK logs through a `{error, warn, info, debug, trace}` object, passing arrays of mixed
 * values, some of them axios errors whose config holds the request body (the app secret, when
 * fetching a token). Only messages and platform codes are passed on, never whole objects.
 */
import type { Logger } from "../../log/logger.js";

type Level = "error" | "warn" | "info" | "debug" | "trace";

export function sdkLogger(logger: Logger): Record<Level, (...args: unknown[]) => void> {
  const child = logger.child({ sdk: "lark" });
  // The SDK's info lines are start-up chatter ("client ready"); they go to debug.
  const at =
    (level: Level) =>
    (...args: unknown[]) => {
      const target = level === "info" ? "debug" : level;
      child[target](summarise(args.flat(2)));
    };
  return { error: at("error"), warn: at("warn"), info: at("info"), debug: at("debug"), trace: at("trace") };
}

function summarise(items: unknown[]): string {
  return items
    .map(summariseOne)
    .filter((s) => s !== "")
    .join(" ");
}

function summariseOne(item: unknown): string {
  if (typeof item === "string") return item;
  if (typeof item === "number" || typeof item === "boolean") return String(item);
  if (item instanceof Error) return item.message;
  if (item && typeof item === "object") {
    const o = item as { message?: unknown; code?: unknown; msg?: unknown; response?: { status?: unknown } };
    const parts: string[] = [];
    if (typeof o.message === "string") parts.push(o.message);
    if (typeof o.response?.status === "number") parts.push(`HTTP ${o.response.status}`);
    if (typeof o.code === "number") parts.push(`code ${o.code}`);
    if (typeof o.msg === "string") parts.push(o.msg);
    return parts.join(" ");
  }
  return "";
}
