/** The live progress view of a reply: what the agent does while it works (see README.md). */
export { isSecretKey, MAX_DETAIL, redactText, summarizeArgs } from "./args.js";
export { toolHeadline } from "./headlines.js";
export { compactText, formatDuration, MAX_ROWS, progressText, summaryText, type TextStyle } from "./text.js";
export { ProgressTracker, REASONING_KEPT, type RunEnding, THINKING, type TrackerOptions } from "./tracker.js";
