/** Shared setup of the DingTalk adapter tests: a fake DingTalk, Antler's HTTP server and a collecting sink. */

import { DingTalkChannel } from "../../../src/channels/dingtalk/index.js";
import type { InboundMessage } from "../../../src/channels/types.js";
import { silentLogger } from "../../../src/log/logger.js";
import { HttpServer } from "../../../src/server/http.js";
import { eventually } from "../../../src/testing/wait.js";
import { FakeDingTalk } from "./index.js";

export const TEMPLATE = "tpl-ai-card.schema";

export interface Rig {
  fake: FakeDingTalk;
  http: HttpServer;
  httpUrl: string;
  channel: DingTalkChannel;
  inbox: InboundMessage[];
  /** Makes the sink slow or failing for the next messages. */
  sinkBehaviour: { delayMs: number; failTimes: number };
  close(): Promise<void>;
}

export async function makeRig(config: Record<string, unknown> = {}, fakeOpts: Parameters<typeof FakeDingTalk.start>[0] = {}) {
  const fake = await FakeDingTalk.start({
    templates: { [TEMPLATE]: { contentKey: "content", buttonsKey: "buttons" } },
    ...fakeOpts,
  });
  const logger = silentLogger();
  const http = new HttpServer({ host: "127.0.0.1", port: 0, logger });
  const addr = await http.listen();
  const channel = new DingTalkChannel({
    name: "dingtalk",
    config: {
      ...fake.connection(),
      ...config,
    } as never,
    logger,
    http: http.mount("dingtalk"),
    baseDir: ".",
  });
  const inbox: InboundMessage[] = [];
  const sinkBehaviour = { delayMs: 0, failTimes: 0 };
  const rig: Rig = {
    fake,
    http,
    httpUrl: `http://127.0.0.1:${addr.port}`,
    channel,
    inbox,
    sinkBehaviour,
    async close() {
      await channel.stop();
      await http.close();
      await fake.close();
    },
  };
  return {
    rig,
    async start() {
      await channel.start(async (msg) => {
        if (sinkBehaviour.delayMs) await new Promise((r) => setTimeout(r, sinkBehaviour.delayMs));
        if (sinkBehaviour.failTimes > 0) {
          sinkBehaviour.failTimes--;
          throw new Error("store unavailable");
        }
        inbox.push(msg);
      });
      return rig;
    },
  };
}

/** Builds a rig and starts the channel. */
export async function startRig(config: Record<string, unknown> = {}, fakeOpts: Parameters<typeof FakeDingTalk.start>[0] = {}) {
  const { start } = await makeRig(config, fakeOpts);
  return start();
}

/** Polls until `check` returns something other than undefined/false. */
export function until<T>(check: () => T | undefined | false, what: string, timeoutMs = 5_000): Promise<T> {
  return eventually(check, timeoutMs, what);
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
