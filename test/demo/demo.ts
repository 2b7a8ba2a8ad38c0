/**
 * `npm run demo`: talk to Antler in this terminal with no account and no API key. The console
 * channel runs through the real dispatcher, renderer and harness; the model is the bundled mock,
 * scripted to stream slowly and to ask a question when you mention a trip.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import pino from "pino";
import type { ConsoleChannel } from "../../src/channels/console/index.js";
import { AppConfigSchema } from "../../src/config/schema.js";
import { createGateway } from "../../src/gateway.js";
import { createLogger } from "../../src/log/logger.js";
import { type ChatCompletionRequest, contentText, type MockReply, mockModelConfig, startMockModel } from "../fakes/openai.js";

function script(req: ChatCompletionRequest): MockReply {
  const last = req.messages.at(-1);
  if (last?.role === "tool") {
    const choice = contentText(last.content);
    return {
      text: `${choice} it is. Day one: arrive and walk around. Day two: the best-known sight, early, before the crowds. Day three: somewhere the locals eat. Type /new to start over, or /help for commands.`,
      chunkSize: 4,
      delayMs: 25,
    };
  }
  const text = contentText(last?.content).toLowerCase();
  if (text.includes("trip") || text.includes("plan")) {
    return {
      toolCalls: [
        {
          name: "ask_clarification",
          args: { question: "Where would you like to go?", options: ["Mountains", "Seaside", "City"] },
        },
      ],
    };
  }
  return {
    text: `Hello! I'm the Antler demo agent, streaming this reply a few characters at a time. You said: "${contentText(last?.content)}". Ask me to plan a trip to see a question with options.`,
    chunkSize: 4,
    delayMs: 25,
  };
}

const model = await startMockModel();
model.setDefault(script);
const dir = mkdtempSync(path.join(tmpdir(), "antler-demo-"));
const config = AppConfigSchema.parse({
  storage: { path: path.join(dir, "antler.db") },
  models: [mockModelConfig(model, "demo")],
  channels: { console: { enabled: true } },
});
const logger = createLogger({ level: "warn", destination: pino.destination(2) });
const gateway = createGateway({ loaded: { config, baseDir: dir }, logger, serve: false });
await gateway.start();
process.stdout.write('Antler demo: type a message and press Enter (try "plan a trip"). Ctrl-D quits.\n');
const terminal = gateway.slot("console")?.channel as ConsoleChannel;
await terminal.closed;
await gateway.dispatcher?.idle();
process.stdout.write("\n");
await gateway.stop();
await model.close();
