import { channelContract } from "../../src/testing/contract/index.js";
import { TelegramDriver } from "../fakes/telegram/driver.js";

channelContract("telegram (polling)", () => TelegramDriver.start({ mode: "polling" }), { also: ["followups"] });
channelContract("telegram (webhook)", () => TelegramDriver.start({ mode: "webhook" }));
