/** bindingStoreContract refuses a part left out without a reason, before it registers any test. */
import { describe, expect, it } from "vitest";
import { SqliteBindingStore } from "../../src/storage/sqlite/index.js";
import { bindingStoreContract } from "../../src/testing/index.js";

const open = async (clock: () => number) => new SqliteBindingStore(":memory:", clock);

describe("bindingStoreContract options", () => {
  it("needs a reason for every skip", () => {
    expect(() => bindingStoreContract("no reason", open, { reopen: open, skip: [{ part: "replicas", reason: " " }] })).toThrow(
      /skipping "replicas" needs a reason/,
    );
  });

  it("needs reopen and openReplica unless their parts are skipped with a reason", () => {
    expect(() => bindingStoreContract("no reopen", open, { skip: [{ part: "replicas", reason: "one process" }] })).toThrow(
      /"restart" needs options\.reopen/,
    );
    expect(() => bindingStoreContract("no replicas", open, { reopen: open })).toThrow(/"replicas" needs options\.openReplica/);
  });
});
