/**
 * The channel contract suite: what every adapter must do for a user, end to end through a real
 * gateway (dispatcher, renderer, SQLite store and the embedded agent over the mock model). Each
 * adapter's test file calls `channelContract(label, makeDriver)` with a driver over its fake
 * platform (see driver.ts). It is published as `antler/testing`, so an adapter loaded by `use:`
 * runs the same checks.
 *
 * Each part is a file of its own (conversation, delivery, lifecycle, routes, group, approval). `parts`
 * runs only some; `skip` leaves one out, and must say why.
 */
import { afterEach, beforeEach, describe, expect } from "vitest";
import type { ContractDriver } from "../driver.js";
import { freePort, startTestGateway, type TestGateway, type TestGatewayOptions } from "../gateway.js";
import { startMockModel } from "../mock-model.js";
import { progressTool, recordingTools } from "../tools.js";
import { APPROVALS, approvalContract } from "./approval.js";
import { conversationContract } from "./conversation.js";
import { deliveryContract } from "./delivery.js";
import { followupsContract } from "./followups.js";
import { groupContract, withApprover } from "./group.js";
import { lifecycleContract } from "./lifecycle.js";
import { CONTRACT_MAX_FILE_MB, mediaContract } from "./media.js";
import { routesContract } from "./routes.js";
import { CONTRACT_PARTS, type ContractContext, type ContractPart } from "./shared.js";

export { CONTRACT_PARTS, type ContractContext, type ContractPart, OPTIONAL_PARTS } from "./shared.js";

/** A part left out, and why (the reason shows in the test report). */
export interface ContractSkip {
  part: ContractPart;
  reason: string;
}

export interface ChannelContractOptions {
  /** More gateway options per test, e.g. another agent backend (and the model behind it). */
  gateway?: () => Promise<Partial<TestGatewayOptions>>;
  /** Run only these parts (default: every part of `CONTRACT_PARTS`). */
  parts?: ContractPart[];
  /** Optional parts to run as well (`OPTIONAL_PARTS`, e.g. `followups`). */
  also?: ContractPart[];
  /** Parts to leave out; each needs a reason. */
  skip?: ContractSkip[];
}

const PARTS: Record<ContractPart, (current: () => ContractContext) => void> = {
  conversation: conversationContract,
  delivery: deliveryContract,
  lifecycle: lifecycleContract,
  routes: routesContract,
  group: groupContract,
  approval: approvalContract,
  media: mediaContract,
  followups: followupsContract,
};

export function channelContract(
  label: string,
  makeDriver: () => Promise<ContractDriver>,
  options: ChannelContractOptions = {},
): void {
  for (const s of options.skip ?? []) {
    if (!s.reason?.trim()) throw new Error(`channelContract(${label}): skipping "${s.part}" needs a reason`);
  }
  describe(`channel contract: ${label}`, () => {
    let ctx: ContractContext | undefined;
    let gw: TestGateway | undefined;

    beforeEach(async () => {
      const driver = await makeDriver();
      const port = await freePort();
      const { gatewayOptions, recording, noApprovals } = await gatewayFor(driver, port, options);
      const started = async (): Promise<ContractContext> => {
        const running = gw;
        if (!running) throw new Error("the contract's gateway is not running");
        ctx = {
          driver,
          gateway: running.gateway,
          model: running.model,
          dir: running.dir,
          toolCalls: recording.calls,
          ...(noApprovals ? { noApprovals } : {}),
          async restart() {
            await running.stop(false);
            gw = await startTestGateway({ ...gatewayOptions, dir: running.dir, model: running.model });
            return started();
          },
        };
        return ctx;
      };
      gw = await startTestGateway(gatewayOptions);
      await started();
      const slot = gw.gateway.slot(driver.channelName);
      expect(slot?.report().state, JSON.stringify(slot?.report())).toBe("running");
    });

    afterEach(async () => {
      await gw?.stop();
      await ctx?.driver.close();
      gw = undefined;
      ctx = undefined;
    });

    const current = (): ContractContext => {
      if (!ctx) throw new Error("the contract's gateway is not running");
      return ctx;
    };
    for (const part of [...(options.parts ?? CONTRACT_PARTS), ...(options.also ?? [])]) {
      const skipped = options.skip?.find((s) => s.part === part);
      if (skipped) describe.skip(`${part} (skipped: ${skipped.reason})`, () => PARTS[part](current));
      else PARTS[part](current);
    }
  });
}

/**
 * The gateway the suite starts around `driver`'s channel: the recording tools and their approval
 * rules (on Antler's own agent), the mock model reading images and transcribing voice, files
 * capped at 1 MiB, and whatever the options add.
 */
async function gatewayFor(driver: ContractDriver, port: number, options: ChannelContractOptions) {
  const config = driver.channelConfig({ gatewayUrl: `http://127.0.0.1:${port}` });
  const channels = { [driver.channelName]: withApprover(driver, config) };
  const recording = recordingTools();
  const given = (await options.gateway?.()) ?? {};
  const backend = (given.agent?.backend as string | undefined) ?? "embedded";
  const noApprovals = backend === "embedded" ? undefined : `the ${backend} backend's agent does not have the recording tools`;
  const agent = noApprovals
    ? given.agent
    : { ...given.agent, approvals: { ...APPROVALS, ...(given.agent?.approvals as object | undefined) } };
  // The model reads images, and transcribes voice at its own endpoint; files are capped at 1 MiB.
  const model = given.model ?? (await startMockModel());
  const sections = given.sections ?? {};
  const gatewayOptions: TestGatewayOptions = {
    ...given,
    model,
    modelConfig: { supports_vision: true, ...given.modelConfig },
    sections: {
      ...sections,
      media: { max_file_mb: CONTRACT_MAX_FILE_MB, transcription: { base_url: model.url }, ...(sections.media as object) },
    },
    ...(agent ? { agent } : {}),
    tools: [...(given.tools ?? []), ...recording.tools, progressTool()],
    channels,
    port,
  };
  return { gatewayOptions, recording, noApprovals };
}
