import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { SqliteBindingStore } from "../../src/bindings/sqlite.js";
import { bindingStoreContract } from "./contract.js";

let file = "";
bindingStoreContract("sqlite", {
  async open(clock) {
    file = path.join(mkdtempSync(path.join(tmpdir(), "antler-bind-")), "nested", "antler.db");
    return new SqliteBindingStore(file, clock);
  },
  async reopen(clock) {
    return new SqliteBindingStore(file, clock);
  },
});
