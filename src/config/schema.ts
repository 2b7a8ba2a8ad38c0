/**
 * The whole config schema: every section's own schema (`sections.ts`), then the checks that
 * span sections (agents, routes, tenants; `agents.ts`). Importing from here gives both.
 */
import type { z } from "zod";
import { checkAgentsAndTenants, DEFAULT_AGENT } from "./agents.js";
import { checkScheduleRefs } from "./schedules.js";
import { AppConfigShape } from "./sections.js";

export * from "./sections.js";

/** The whole config: each section's own checks, then those across sections (agents, routes, tenants, schedule jobs). */
export const AppConfigSchema = AppConfigShape.superRefine((config, ctx) => {
  const known = { channels: Object.keys(config.channels), agents: [DEFAULT_AGENT, ...Object.keys(config.agents)] };
  for (const issue of [...checkAgentsAndTenants(config), ...checkScheduleRefs(config.schedules, known)]) {
    ctx.addIssue({ code: "custom", path: issue.path, message: issue.message });
  }
}).transform(withWebTokens);

/**
 * A built-in web chat without a token of its own takes its tenant's admin token, else
 * `server.admin_token`: an operator who set one need not give the chat a second (channels/web).
 */
function withWebTokens(config: z.output<typeof AppConfigShape>): z.output<typeof AppConfigShape> {
  for (const [name, section] of Object.entries(config.channels)) {
    if ((section.use ?? name) !== "web" || section.token) continue;
    const tenant = Object.values(config.tenants).find((t) => t.channels.includes(name));
    const token = tenant?.admin_token || config.server.admin_token;
    if (token) section.token = token;
  }
  return config;
}
