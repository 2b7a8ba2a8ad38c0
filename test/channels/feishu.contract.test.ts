import { channelContract } from "../../src/testing/contract/index.js";
import { FeishuDriver } from "../fakes/feishu/driver.js";

channelContract("feishu (websocket)", () => FeishuDriver.start({ mode: "websocket" }));
channelContract("feishu (webhook)", () => FeishuDriver.start({ mode: "webhook" }));
