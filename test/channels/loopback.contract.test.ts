import { channelContract } from "../../src/testing/contract/index.js";
import { loopbackDriver } from "../contract/loopback-driver.js";

channelContract("loopback", async () => loopbackDriver({ buttons: true, edits: true }));
channelContract("loopback without buttons or edits", async () => loopbackDriver({ buttons: false, edits: false }), {
  also: ["followups"],
});
