/** Bolt, the Web API client and the Socket Mode client log through this bridge into pino. */
import { LogLevel, type Logger as SlackLogger } from "@slack/bolt";
import type { Logger } from "../../log/logger.js";

const TO_SLACK: Record<string, LogLevel> = {
  trace: LogLevel.DEBUG,
  debug: LogLevel.DEBUG,
  info: LogLevel.INFO,
  warn: LogLevel.WARN,
};

function text(parts: unknown[]): string {
  return parts.map((p) => (p instanceof Error ? p.message : typeof p === "string" ? p : JSON.stringify(p))).join(" ");
}

/** A Slack SDK logger writing to `logger`. The SDK's level follows pino's; setLevel is ignored. */
export function slackSdkLogger(logger: Logger): SlackLogger {
  return {
    debug: (...msg: unknown[]) => logger.debug(text(msg)),
    info: (...msg: unknown[]) => logger.info(text(msg)),
    warn: (...msg: unknown[]) => logger.warn(text(msg)),
    error: (...msg: unknown[]) => logger.error(text(msg)),
    setLevel: () => {},
    getLevel: () => TO_SLACK[logger.level] ?? LogLevel.ERROR,
    setName: () => {},
  };
}
