import { describe, expect, it } from "vitest";
import { assignToolNames, sanitizeToolName } from "../../src/harness/mcp/index.js";

function named(result: ReturnType<typeof assignToolNames>, server: string): Record<string, string> {
  return Object.fromEntries(result.names.get(server) ?? []);
}

describe("MCP tool names", () => {
  it("keeps unique names, and applies tool_prefix to every tool of its server", () => {
    const result = assignToolNames(
      [
        { server: "fs", tools: ["read_file", "list"] },
        { server: "gh", prefix: "github", tools: ["search"] },
      ],
      ["ask_clarification"],
    );
    expect(named(result, "fs")).toEqual({ read_file: "read_file", list: "list" });
    expect(named(result, "gh")).toEqual({ search: "github__search" });
    expect(result.dropped).toEqual([]);
  });

  it("puts the server name in front on every side of a collision, and never renames a reserved tool", () => {
    const result = assignToolNames(
      [
        { server: "a", tools: ["echo", "ask_clarification"] },
        { server: "b", tools: ["echo", "only_b"] },
        { server: "c", prefix: "x", tools: ["echo"] },
      ],
      ["ask_clarification", "x__echo"],
    );
    expect(named(result, "a")).toEqual({ echo: "a__echo", ask_clarification: "a__ask_clarification" });
    expect(named(result, "b")).toEqual({ echo: "b__echo", only_b: "only_b" });
    expect(named(result, "c")).toEqual({ echo: "c__x__echo" });
  });

  it("leaves a tool out when even the prefixed name is taken", () => {
    const result = assignToolNames([{ server: "a", tools: ["echo"] }], ["echo", "a__echo"]);
    expect(named(result, "a")).toEqual({});
    expect(result.dropped).toEqual([{ server: "a", tool: "echo", name: "a__echo" }]);
  });

  it("makes names the OpenAI API accepts", () => {
    expect(sanitizeToolName("files.read file/v2")).toBe("files_read_file_v2");
    expect(sanitizeToolName("x".repeat(80))).toHaveLength(64);
    const result = assignToolNames(
      [
        { server: "my.server", tools: ["a.b"] },
        { server: "s2", tools: ["a_b"] },
      ],
      [],
    );
    expect(named(result, "my.server")).toEqual({ "a.b": "my_server__a_b" });
    expect(named(result, "s2")).toEqual({ a_b: "s2__a_b" });
  });
});
