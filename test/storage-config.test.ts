/** The `storage` section: SQLite by default, PostgreSQL only with a URL. */
import { describe, expect, it } from "vitest";
import { parseConfig } from "../src/config/loader.js";

describe("storage config", () => {
  it("defaults to SQLite, with a pool size for PostgreSQL", () => {
    expect(parseConfig("", {}).storage).toMatchObject({ kind: "sqlite", path: "./data/antler.db", pool_size: 8 });
  });

  it("takes a postgres URL, also from the environment", () => {
    const config = parseConfig("storage:\n  kind: postgres\n  url: ${DATABASE_URL}\n  pool_size: '4'\n", {
      DATABASE_URL: "postgres://antler@db:5432/antler",
    });
    expect(config.storage).toMatchObject({ kind: "postgres", url: "postgres://antler@db:5432/antler", pool_size: 4 });
  });

  it("names storage.url and how to set it when kind is postgres without one", () => {
    expect(() => parseConfig("storage:\n  kind: postgres\n", {})).toThrow(
      /storage\.url: is required when storage\.kind is postgres: set it to postgres:\/\//,
    );
    expect(() => parseConfig("storage:\n  kind: postgres\n  url: mysql://x/y\n", {})).toThrow(
      /storage\.url: must be a postgres:\/\/ URL/,
    );
    expect(() => parseConfig("storage:\n  kind: mongo\n", {})).toThrow(/storage\.kind/);
    expect(() => parseConfig("storage:\n  pool_size: 1\n", {})).toThrow(/storage\.pool_size/);
  });

  it("keeps each thread's newest checkpoints unless told to keep them all", () => {
    expect(parseConfig("", {}).storage.checkpoint_history).toBe("latest");
    expect(parseConfig("storage:\n  checkpoint_history: all\n", {}).storage.checkpoint_history).toBe("all");
    expect(() => parseConfig("storage:\n  checkpoint_history: none\n", {})).toThrow(/storage\.checkpoint_history/);
  });
});
