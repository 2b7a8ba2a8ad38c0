/**
 * The files a server run presented to the user, read from the state it ended with:
 * - paths in the run's `present_files` tool calls (DeerFlow's tool: `filepaths`, virtual paths
 *   such as `/mnt/user-data/outputs/report.pdf`), unless the call's result was an error;
 * - entries of the state's `artifacts` key that were not there when the run began. An entry is a
 *   path (a string), `{ name, data_base64, mime? }` (the bytes themselves) or `{ name, url }`.
 *
 * "This run" is what the run added: the messages and entries missing from its first state. A run
 * joined after it had ended has no first state: then its tool calls after the newest user message
 * count, and its `artifacts` entries do not (they cannot be told from older ones).
 */
import { type BaseMessage, isAIMessage, isHumanMessage, isToolMessage } from "@langchain/core/messages";
import { STEERED_KEY } from "../steer/boundary.js";
import { messagesIn } from "./messages.js";

/** One presented file, before it is fetched. */
export type Presented =
  | { kind: "path"; name: string; path: string }
  | { kind: "data"; name: string; base64: string }
  | { kind: "url"; name: string; url: string };

/** What a run's first state held, to tell its own files apart. */
export interface ArtifactBaseline {
  messageIds?: ReadonlySet<string>;
  artifacts?: ReadonlySet<string>;
}

/** DeerFlow's tool (and its older singular name). */
const PRESENT_TOOLS = new Set(["present_files", "present_file"]);

/** A state `artifacts` entry as a comparable key. */
export function artifactKey(entry: unknown): string {
  return typeof entry === "string" ? entry : JSON.stringify(entry);
}

/** The keys of a state's `artifacts` entries. */
export function artifactKeys(values: Record<string, unknown> | undefined): Set<string> {
  return new Set(artifactList(values).map(artifactKey));
}

function artifactList(values: Record<string, unknown> | undefined): unknown[] {
  const list = values?.artifacts;
  return Array.isArray(list) ? list : [];
}

function baseName(path: string): string {
  return path.split("/").filter(Boolean).at(-1) ?? "";
}

/** The messages the run added; without a first state, those after the newest message a person wrote. */
function runMessages(messages: readonly BaseMessage[], before: ReadonlySet<string> | undefined): BaseMessage[] {
  if (before) return messages.filter((m) => !m.id || !before.has(m.id));
  const typed = (m: BaseMessage) =>
    isHumanMessage(m) && m.additional_kwargs?.[STEERED_KEY] !== true && m.additional_kwargs?.hide_from_ui !== true;
  return messages.slice(messages.findLastIndex(typed) + 1);
}

/** Paths of the run's `present_files` calls whose result was not an error, in call order. */
function presentedPaths(messages: readonly BaseMessage[]): string[] {
  const failed = new Set(
    messages
      .filter(isToolMessage)
      .filter((m) => m.status === "error" || /^\s*error\b/i.test(m.text))
      .map((m) => m.tool_call_id),
  );
  const paths: string[] = [];
  for (const m of messages) {
    if (!isAIMessage(m)) continue;
    for (const call of m.tool_calls ?? []) {
      if (!PRESENT_TOOLS.has(call.name) || (call.id && failed.has(call.id))) continue;
      const list = (call.args as { filepaths?: unknown }).filepaths;
      if (Array.isArray(list)) paths.push(...list.filter((p): p is string => typeof p === "string" && p.trim() !== ""));
    }
  }
  return paths;
}

/** One `artifacts` entry as a presented file; undefined for a shape Antler does not read. */
function entryOf(entry: unknown): Presented | undefined {
  if (typeof entry === "string") return entry.trim() ? { kind: "path", name: baseName(entry), path: entry } : undefined;
  if (!entry || typeof entry !== "object") return undefined;
  const { name, data_base64, url } = entry as Record<string, unknown>;
  if (typeof name !== "string" || !name.trim()) return undefined;
  if (typeof data_base64 === "string") return { kind: "data", name, base64: data_base64 };
  if (typeof url === "string") return { kind: "url", name, url };
  return undefined;
}

/** What the run presented, in order: the new `artifacts` entries, then the called paths not among them. */
export function presentedIn(
  values: Record<string, unknown> | undefined,
  baseline: ArtifactBaseline,
): { files: Presented[]; unreadable: unknown[] } {
  const files: Presented[] = [];
  const unreadable: unknown[] = [];
  if (baseline.artifacts) {
    const seen = new Set<string>();
    for (const entry of artifactList(values)) {
      const key = artifactKey(entry);
      if (baseline.artifacts.has(key) || seen.has(key)) continue;
      seen.add(key);
      const file = entryOf(entry);
      if (file) files.push(file);
      else unreadable.push(entry);
    }
  }
  // The server may store a called path in another form (a host path made virtual): the same
  // file name among the new entries is that file.
  const entries = new Set(files.filter((f) => f.kind === "path").map((f) => f.name));
  for (const path of new Set(presentedPaths(runMessages(messagesIn(values), baseline.messageIds)))) {
    const name = baseName(path);
    if (!entries.has(name)) files.push({ kind: "path", name, path });
  }
  return { files, unreadable };
}
