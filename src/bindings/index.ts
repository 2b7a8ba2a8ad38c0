export { SqliteBindingStore } from "./sqlite.js";
export type { BindingStore, InboxEntry, InboxState, Json, PendingQuestion, ThreadBinding } from "./types.js";
export { DEFAULT_TENANT } from "./types.js";
