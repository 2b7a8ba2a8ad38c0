import { channelContract } from "../contract/channel-contract.js";
import { SlackDriver } from "../fakes/slack/driver.js";

channelContract("slack (socket, DM)", () => SlackDriver.start({ mode: "socket", conversation: "dm" }));
channelContract("slack (http, DM)", () => SlackDriver.start({ mode: "http", conversation: "dm" }));
channelContract("slack (socket, channel thread, native stream)", () =>
  SlackDriver.start({ mode: "socket", conversation: "thread" }),
);
channelContract("slack (http, channel thread, native stream)", () => SlackDriver.start({ mode: "http", conversation: "thread" }));
