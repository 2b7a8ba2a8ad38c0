/**
 * The adapter folders keep one file name per role (src/channels/README.md, "Files of an
 * adapter"): each role's file has the one name in every folder, no folder keeps an old name,
 * and every platform adapter has the files every adapter needs.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "../helpers/cli.js";

const CHANNELS = path.join(ROOT, "src", "channels");
const SHARED = ["kit", "markdown"];
const ADAPTERS = readdirSync(CHANNELS, { withFileTypes: true })
  .filter((e) => e.isDirectory() && !SHARED.includes(e.name))
  .map((e) => e.name)
  .sort();

/** The files every platform adapter has. */
const REQUIRED = ["index.ts", "config.ts", "format.ts", "inbound.ts", "map-error.ts", "README.md"];

/** Adapters without a platform behind them, and what they leave out (and why). */
const EXEMPT: Record<string, { files: string[]; reason: string }> = {
  // The page's requests are read in index.ts, and there is no platform whose errors need mapping.
  web: { files: ["inbound.ts", "map-error.ts"], reason: "the web chat is served by Antler itself" },
  // A terminal: lines in, lines out, no config section of its own beyond enabled.
  console: {
    files: ["config.ts", "inbound.ts", "map-error.ts"],
    reason: "the console is one terminal (see src/channels/README.md)",
  },
};

/** Names a role had before, and the name it has now. */
const OLD_NAMES: Record<string, string> = {
  "cardkit.ts": "stream.ts",
  "card-stream.ts": "stream.ts",
  "update-check.ts": "webhook-check.ts",
  "envelope-check.ts": "webhook-check.ts",
  "event-check.ts": "webhook-check.ts",
  "media.ts": "attachments.ts",
  "polling.ts": "transport.ts",
  "socket-receiver.ts": "transport-socket.ts",
  "http-receiver.ts": "transport-webhook.ts",
  "long-connection.ts": "transport-websocket.ts",
  "webhook.ts": "transport-webhook.ts",
  "stream-client.ts": "transport.ts",
  "callback-data.ts": "buttons.ts",
  "custom-id.ts": "buttons.ts",
  "blocks.ts": "buttons.ts",
  "threads.ts": "bot-threads.ts (Slack) or thread-start.ts (Discord)",
  "recent-set.ts": "the kit's recent.ts",
};

/** A role recognised by what a file holds, and the one name such a file has. */
const ROLES: Array<{ role: string; name: RegExp; holds: RegExp }> = [
  { role: "native stream", name: /^stream\.ts$/, holds: /implements NativeStream\b/ },
  { role: "inbound attachments", name: /^attachments\.ts$/, holds: /export function \w+\([^)]*\): InboundAttachment\[\]/ },
  {
    role: "button codec",
    name: /^buttons\.ts$/,
    holds: /export function (encode|decode)\w*(CustomId|CallbackData|ButtonValue)\b/,
  },
  { role: "webhook body check", name: /^webhook-check\.ts$/, holds: /export function \w+Problem\([^)]*\): string \| undefined/ },
];

function filesOf(adapter: string): string[] {
  return readdirSync(path.join(CHANNELS, adapter), { withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => e.name);
}

describe("adapter folders", () => {
  it("has the adapters this test knows", () => {
    expect(ADAPTERS).toEqual(["console", "dingtalk", "discord", "feishu", "slack", "telegram", "web"]);
  });

  for (const adapter of ADAPTERS) {
    describe(adapter, () => {
      const files = filesOf(adapter);

      it("has the files every adapter has", () => {
        const exempt = EXEMPT[adapter]?.files ?? [];
        const missing = REQUIRED.filter((f) => !exempt.includes(f) && !files.includes(f));
        expect(missing, `${adapter} lacks`).toEqual([]);
      });

      it("keeps no old name", () => {
        const old = files.filter((f) => f in OLD_NAMES).map((f) => `${f} → ${OLD_NAMES[f]}`);
        expect(old).toEqual([]);
      });

      it("names each role's file the one way", () => {
        const misnamed: string[] = [];
        for (const file of files.filter((f) => f.endsWith(".ts"))) {
          const text = readFileSync(path.join(CHANNELS, adapter, file), "utf8");
          for (const { role, name, holds } of ROLES) {
            if (holds.test(text) && !name.test(file)) misnamed.push(`${file} holds the ${role}`);
          }
        }
        expect(misnamed).toEqual([]);
      });

      it("names its transports transport.ts or transport-<mode>.ts", () => {
        const transports = files.filter((f) => f.startsWith("transport"));
        expect(transports.filter((f) => !/^transport(-[a-z]+)?\.ts$/.test(f))).toEqual([]);
        if (transports.length > 1) expect(transports).not.toContain("transport.ts");
      });
    });
  }
});
