import { channelContract } from "../../src/testing/contract/index.js";
import { discordDriver } from "../fakes/discord/driver.js";

const NO_ACK = {
  part: "delivery" as const,
  reason:
    "Discord's Gateway has no acknowledgement and never sends an event twice; a message the core cannot record is tried again, then answered with a notice (discord.test.ts)",
};

channelContract("discord (DM; server threads)", () => discordDriver({ thread: true }), { skip: [NO_ACK] });
channelContract("discord (DM; server channel, thread: false)", () => discordDriver({ thread: false, scope: "chat" }), {
  skip: [NO_ACK],
});
