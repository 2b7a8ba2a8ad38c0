import { channelContract } from "../../src/testing/contract/index.js";
import { dingTalkDriver } from "../fakes/dingtalk/driver.js";

// The cards run keeps the default session_scope (user), where a card's buttons were open to
// everyone in the group; the others share one thread per group, where text answers meet.
channelContract("dingtalk stream mode with AI cards", () => dingTalkDriver({ mode: "stream", cards: true, scope: "user" }));
channelContract("dingtalk stream mode, markdown replies", () => dingTalkDriver({ mode: "stream", cards: false, scope: "chat" }));
channelContract("dingtalk webhook mode, markdown replies", () =>
  dingTalkDriver({ mode: "webhook", cards: false, scope: "chat" }),
);
