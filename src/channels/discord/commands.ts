/**
 * Slash commands: the ones `register_commands` installs (each becomes the core's text command),
 * registered globally or per server when the channel starts. A refusal is noted on the
 * channel's status and logged; the channel runs on without them.
 */
import { type Client, Routes } from "discord.js";
import type { Logger } from "../../log/logger.js";
import type { DiscordChannelConfig } from "./config.js";
import { mapDiscordError } from "./map-error.js";

export const SLASH_COMMANDS = [
  { name: "new", description: "Start a new conversation with the agent" },
  { name: "status", description: "Show this conversation's agent, thread and state" },
  { name: "stop", description: "Stop the reply being written" },
  { name: "help", description: "What this bot understands" },
  {
    name: "agent",
    description: "List the agents you may use here, or switch to one",
    options: [{ type: 3, name: "name", description: "The agent to switch to", required: false }],
  },
];

export interface CommandSetup {
  channel: string;
  config: DiscordChannelConfig;
  logger: Logger;
  /** Notes a problem on the channel's status. */
  noteError: (err: unknown) => void;
}

export async function registerCommands(client: Client, setup: CommandSetup): Promise<void> {
  const { channel, config } = setup;
  const where = config.register_commands;
  if (where === "off") return;
  const app = config.application_id ?? client.application?.id;
  if (!app) {
    setup.noteError(`[${channel}] no application id: set channels.${channel}.application_id to register commands`);
    return;
  }
  const guilds =
    where === "guild" ? (config.allowed_guilds.length > 0 ? config.allowed_guilds : [...client.guilds.cache.keys()]) : [];
  const routes =
    where === "global" ? [Routes.applicationCommands(app)] : guilds.map((g) => Routes.applicationGuildCommands(app, g));
  for (const route of routes) {
    try {
      await client.rest.put(route, { body: SLASH_COMMANDS });
    } catch (err) {
      const mapped = mapDiscordError(channel, err, `registering slash commands (${route})`);
      setup.noteError(mapped);
      setup.logger.warn({ err: mapped.message }, "slash commands not registered");
    }
  }
}
