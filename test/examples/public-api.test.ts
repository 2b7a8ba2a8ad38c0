/**
 * `antler/channel` (src/channel.ts) is the whole contract: every name src/channels/types.ts
 * exports, and every error an adapter throws, is exported there too, so a channel loaded by
 * `use:` never needs a path into src/.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "../helpers/cli.js";

const read = (file: string) => readFileSync(path.join(ROOT, file), "utf8");

/** Names declared with `export` in a source file (not re-exports). */
function declared(file: string): string[] {
  return [...read(file).matchAll(/^export (?:declare )?(?:abstract )?(?:interface|type|class|const|function) (\w+)/gm)].map(
    (m) => m[1] ?? "",
  );
}

/** Names the entry point exports, from its `export { … } from` and `export type { … } from` lists. */
function exported(file: string): Set<string> {
  const names = new Set<string>();
  for (const list of read(file).matchAll(/^export (?:type )?\{([^}]*)\} from/gm)) {
    for (const item of (list[1] ?? "").split(",")) {
      const name = item
        .trim()
        .replace(/^type /, "")
        .split(/\s+as\s+/)
        .at(-1);
      if (name) names.add(name);
    }
  }
  return names;
}

describe("antler/channel", () => {
  const api = exported("src/channel.ts");

  it("exports every name of the channel contract", () => {
    const contract = declared("src/channels/types.ts");
    expect(contract).toContain("InboundAttachment");
    expect(contract.filter((n) => !api.has(n))).toEqual([]);
  });

  it("exports ChannelError, its codes and every error built on it", () => {
    const errors = [...read("src/errors.ts").matchAll(/^export class (\w+) extends ChannelError/gm)].map((m) => m[1] ?? "");
    expect(errors).toContain("FileTooLargeError");
    expect([...errors, "ChannelError", "ChannelErrorCode"].filter((n) => !api.has(n))).toEqual([]);
  });

  it("exports the kit's classes and the Markdown renderer", () => {
    const kit = ["LifecycleChannel", "ChannelLifecycle", "mountWebhook", "ClickHolds", "fetchBounded", "readBounded"];
    const body = ["readBody", "readJson", "HttpError"];
    const markdown = ["renderMarkdown", "plainEmitter", "MarkdownEmitter", "literalMarkdown"];
    expect([...kit, ...body, ...markdown, "accessConfigShape", "accessRulesFrom"].filter((n) => !api.has(n))).toEqual([]);
  });
});
