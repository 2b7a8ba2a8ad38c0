/**
 * The stream renderer: runs into chat messages, written once for every platform. The
 * dispatcher calls `renderRun` for a run and the helpers for notices and questions.
 */
export { joinMarkdownChunks, splitMarkdown } from "./chunk.js";
export { noticeMarkdown, sendNotice } from "./notice.js";
export { closeQuestion, questionContent } from "./question.js";
export { repairMarkdown } from "./repair.js";
export { renderRun } from "./streamer.js";
export type { RenderHooks, RenderOptions, RenderOutcome } from "./types.js";
