/**
 * `antler/testing`: the channel contract suite and what it runs on, for adapters of Antler's own
 * and for third-party ones loaded by `use:`. It needs vitest (the suite registers tests) in the
 * project that imports it. See src/channels/README.md, "Testing an adapter".
 */

export {
  type HarnessContractOptions,
  type HarnessContractTest,
  type HarnessSubject,
  harnessContract,
} from "./contract/harness.js";
export {
  type ChannelContractOptions,
  CONTRACT_PARTS,
  type ContractPart,
  type ContractSkip,
  channelContract,
} from "./contract/index.js";
export type { ContractDriver, GroupDriver, GroupMember, VisibleMessage } from "./driver.js";
export {
  freePort,
  startTestGateway,
  type TestGateway,
  type TestGatewayOptions,
  testLogger,
} from "./gateway.js";
export { contentText, lastUserImages, type MockModel, mockModelConfig, startMockModel } from "./mock-model.js";
export { type RecordedCall, type RecordingTools, recordingTools } from "./tools.js";
export { eventually, setWaitFloor, sleep } from "./wait.js";
