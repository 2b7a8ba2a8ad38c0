/** Builds a SlackChannel against a FakeSlack, with a real HttpServer and a collecting sink. */

import { SlackChannelConfig } from "../../../src/channels/slack/config.js";
import { SlackChannel } from "../../../src/channels/slack/index.js";
import type { InboundMessage } from "../../../src/channels/types.js";
import { silentLogger } from "../../../src/log/logger.js";
import { HttpServer } from "../../../src/server/http.js";
import type { FakeSlack } from "./index.js";

export interface AdapterRig {
  channel: SlackChannel;
  http: HttpServer;
  inbox: InboundMessage[];
  /** Replaces what the sink does (after recording); e.g. a slow or failing core. */
  onInbound: (msg: InboundMessage) => Promise<void>;
  /** Times at which the sink finished, per event id. */
  recordedAt: Map<string, number>;
  start(): Promise<void>;
  stop(): Promise<void>;
}

export function slackConfigFor(fake: FakeSlack, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    mode: fake.options.mode,
    bot_token: fake.botToken,
    ...(fake.options.mode === "socket" ? { app_token: fake.appToken } : { signing_secret: fake.signingSecret }),
    api_base: fake.apiUrl,
    ...extra,
  };
}

export async function adapterRig(fake: FakeSlack, extra: Record<string, unknown> = {}): Promise<AdapterRig> {
  const logger = silentLogger();
  const http = new HttpServer({ host: "127.0.0.1", port: 0, logger });
  const address = await http.listen();
  fake.eventsUrl = `http://127.0.0.1:${address.port}/webhooks/slack`;
  const config = SlackChannelConfig.parse(slackConfigFor(fake, extra));
  const channel = new SlackChannel({ name: "slack", config, logger, http: http.mount("slack"), baseDir: process.cwd() });
  const rig: AdapterRig = {
    channel,
    http,
    inbox: [],
    recordedAt: new Map(),
    onInbound: async () => {},
    start: () =>
      channel.start(async (msg) => {
        rig.inbox.push(msg);
        await rig.onInbound(msg);
        rig.recordedAt.set(msg.eventId, Date.now());
      }),
    async stop() {
      await channel.stop();
      await http.close();
    },
  };
  return rig;
}
