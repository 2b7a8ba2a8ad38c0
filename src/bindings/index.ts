/** The binding store's contract: its three concerns, the store of one tenant, and their rows' types. */
export type {
  BindingStore,
  Bindings,
  Inbox,
  InboxEntry,
  InboxState,
  Json,
  PendingQuestion,
  PendingQuestions,
  ThreadBinding,
} from "./types.js";
export { DEFAULT_TENANT } from "./types.js";
