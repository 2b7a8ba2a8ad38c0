/**
 * The one Markdown renderer and its emitters' contract. Platform emitters live next to their
 * adapters (`channels/<platform>/format.ts`); the plain-text emitter is shared.
 */
export type { FullEmitter, LinkInfo, ListItemInfo, MarkdownEmitter, TableInfo } from "./emitter.js";
export { literalMarkdown } from "./literal.js";
export { fitText, type Measure, measureFor } from "./measure.js";
export { defaultMarker, labelAndTarget, longestRun, plainEmitter, prefixLines, tableLines } from "./plain.js";
export { fullEmitter, lexMarkdown, renderMarkdown, renderTokens } from "./walk.js";
