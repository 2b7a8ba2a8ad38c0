/**
 * The channel contract for the web chat, through a Node client that speaks the page's wire
 * (test/fakes/web). Parts that cannot apply to a page in one browser are skipped, saying why.
 * The media part runs: files go up through the page's upload route.
 */
import { channelContract } from "../../src/testing/contract/index.js";
import { WebDriver } from "../fakes/web/driver.js";

const skips = [
  { part: "group" as const, reason: "a web conversation belongs to one browser: there are no groups or other members" },
];

// The driver has no botEcho (a page never shows the bot its own messages): the contract skips that test.
channelContract("web", async () => new WebDriver(), { skip: skips });
