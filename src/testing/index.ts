/**
 * `antler/testing`: the channel contract suite and what it runs on, for adapters of Antler's own
 * and for third-party ones loaded by `use:`, and the binding-store contract suite every storage
 * kind's store passes. It needs vitest (the suites register tests) in the project that imports
 * it. See src/channels/README.md, "Testing an adapter", and src/storage/README.md.
 */

export {
  BINDING_STORE_PARTS,
  type BindingStoreContractOptions,
  type BindingStorePart,
  type BindingStoreSkip,
  bindingStoreContract,
  type OpenBindingStore,
} from "./contract/binding-store.js";
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
export type { BotFile, ContractDriver, GroupDriver, GroupMember, UserFile, VisibleMessage } from "./driver.js";
export {
  freePort,
  startTestGateway,
  type TestGateway,
  type TestGatewayOptions,
  testLogger,
} from "./gateway.js";
export { contentText, lastUserImages, type MockModel, mockModelConfig, startMockModel } from "./mock-model.js";
export {
  PROGRESS_TOOL,
  type ProgressToolOptions,
  progressText,
  progressTool,
  type RecordedCall,
  type RecordingTools,
  recordingTools,
  waitTool,
} from "./tools.js";
export { eventually, setWaitFloor, sleep } from "./wait.js";
