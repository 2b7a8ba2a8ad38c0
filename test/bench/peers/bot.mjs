/**
 * The hand-written bot `npm run bench:peers` measures Antler against: the least a person would
 * write to stream a model's reply into Telegram. telegraf long polling (`telegram.apiRoot` = the
 * fake), and for each text message `ChatOpenAI.stream` (baseURL = the mock): one sendMessage at
 * the first token, then editMessageText with the newest text at most once per EDIT_INTERVAL_MS,
 * and a last edit with the exact full text (also kept to the interval). No persistence, no agent,
 * no retries. Plain JS so Node runs it without a loader, like Antler's built dist/cli.js.
 *
 *   BOT_TOKEN=… API_ROOT=http://… MODEL_URL=http://…/v1 [EDIT_INTERVAL_MS=1000] node bot.mjs
 */
import { ChatOpenAI } from "@langchain/openai";
import { Telegraf } from "telegraf";
import { message } from "telegraf/filters";

const { BOT_TOKEN = "", API_ROOT, MODEL_URL } = process.env;
const EDIT_INTERVAL_MS = Number(process.env.EDIT_INTERVAL_MS ?? 1000);

const bot = new Telegraf(BOT_TOKEN, { telegram: { apiRoot: API_ROOT } });
const model = new ChatOpenAI({ model: "mock-model", apiKey: "sk-mock", configuration: { baseURL: MODEL_URL }, maxRetries: 0 });
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

async function reply(chatId, prompt) {
  let text = "";
  let shown = "";
  let messageId;
  let lastCall = 0;
  const show = async () => {
    const now = text;
    lastCall = Date.now();
    if (messageId === undefined) messageId = (await bot.telegram.sendMessage(chatId, now)).message_id;
    else await bot.telegram.editMessageText(chatId, messageId, undefined, now);
    shown = now;
  };
  for await (const chunk of await model.stream(prompt)) {
    text += typeof chunk.content === "string" ? chunk.content : "";
    if (text !== "" && (messageId === undefined || Date.now() - lastCall >= EDIT_INTERVAL_MS)) await show();
  }
  if (text !== shown) {
    await sleep(lastCall + EDIT_INTERVAL_MS - Date.now());
    await show();
  }
}

// Not awaited: telegraf waits for a whole batch of updates before it polls again.
bot.on(message("text"), (ctx) => {
  reply(ctx.chat.id, ctx.message.text).catch((err) => console.error(`reply failed: ${err}`));
});
process.once("SIGTERM", () => bot.stop("SIGTERM"));
process.once("SIGINT", () => bot.stop("SIGINT"));
await bot.launch();
