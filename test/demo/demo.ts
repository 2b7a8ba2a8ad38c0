/**
 * `npm run demo`: talk to Antler with no account and no API key. The model is the bundled mock,
 * scripted to stream slowly and to ask a question when you mention a trip; the dispatcher,
 * renderer and harness are the real ones.
 *
 * - `npm run demo`: a conversation in this terminal (the console channel).
 * - `npm run demo -- --web [--port N]`: the web chat at http://127.0.0.1:8787/chat (Ctrl-C quits).
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import pino from "pino";
import { ConsoleChannel } from "../../src/channels/console/index.js";
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

const web = process.argv.includes("--web");
const portArg = process.argv[process.argv.indexOf("--port") + 1];
const port = process.argv.includes("--port") ? Number(portArg) : 8787;
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  process.stderr.write(`--port must be a port number, not ${portArg}\n`);
  process.exit(2);
}

const model = await startMockModel();
model.setDefault(script);
const dir = mkdtempSync(path.join(tmpdir(), "antler-demo-"));
const config = AppConfigSchema.parse({
  server: { host: "127.0.0.1", port },
  storage: { path: path.join(dir, "antler.db") },
  models: [mockModelConfig(model, "demo")],
  channels: web ? { web: { enabled: true } } : { console: { enabled: true } },
});
const logger = createLogger({ level: "warn", destination: pino.destination(2) });
const gateway = createGateway({ loaded: { config, baseDir: dir }, logger, serve: web });
// In the terminal, the prompt comes back once the agent has answered (see src/channels/console/).
ConsoleChannel.io = {
  input: process.stdin,
  output: process.stdout,
  idle: () => gateway.messageDispatcher?.idle() ?? Promise.resolve(),
};
if (!web) process.stdout.write('Antler demo: type a message and press Enter (try "plan a trip"). Ctrl-D quits.\n');
await gateway.start();

if (web) {
  const report = gateway.report("web");
  if (report?.state !== "running") {
    process.stderr.write(`the web chat did not start: ${report?.reason ?? "unknown reason"}\n`);
    process.exit(1);
  }
  const addr = gateway.server.address();
  process.stdout.write(
    `Antler demo: open http://127.0.0.1:${addr?.port}/chat and say hello (try "plan a trip"). Ctrl-C quits.\n`,
  );
  await new Promise<void>((resolve) => {
    process.once("SIGINT", resolve);
    process.once("SIGTERM", resolve);
  });
  await gateway.stop();
  await model.close();
  process.exit(0);
}

const terminal = gateway.slot("console")?.channel as ConsoleChannel;
await terminal.closed;
await gateway.messageDispatcher?.idle();
terminal.endLine();
await gateway.stop();
await model.close();
