/** The binding store's contract: its three concerns, the store of one tenant, and their rows' types. */

export type {
  NewOutboxEntry,
  Outbox,
  OutboxEntry,
  OutboxFilter,
  OutboxKind,
  OutboxState,
  OutboxUpdate,
} from "./outbox.js";
export { OUTBOX_FINAL_STATES } from "./outbox.js";
export type {
  NewSchedule,
  Schedule,
  ScheduleAction,
  ScheduleFilter,
  ScheduleFire,
  ScheduleResult,
  ScheduleState,
  Schedules,
  ScheduleTiming,
  ScheduleUpdate,
} from "./schedules.js";
export type {
  BindingStore,
  Bindings,
  ConversationSettings,
  Inbox,
  InboxEntry,
  InboxState,
  Json,
  PendingQuestion,
  PendingQuestions,
  ThreadBinding,
} from "./types.js";
export { DEFAULT_TENANT } from "./types.js";
