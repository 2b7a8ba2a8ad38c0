import { channelContract } from "../../src/testing/contract/index.js";
import { SlackDriver } from "../fakes/slack/driver.js";

channelContract("slack (socket, DM)", () => SlackDriver.start({ mode: "socket", conversation: "dm" }), { also: ["followups"] });
channelContract("slack (webhook, DM)", () => SlackDriver.start({ mode: "webhook", conversation: "dm" }));
channelContract(
  "slack (socket, channel thread, native stream)",
  () => SlackDriver.start({ mode: "socket", conversation: "thread" }),
  {
    also: ["followups"],
  },
);
channelContract("slack (webhook, channel thread, native stream)", () =>
  SlackDriver.start({ mode: "webhook", conversation: "thread" }),
);
