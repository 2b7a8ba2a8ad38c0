/** The mock OpenAI-compatible model server; it lives in src/testing so `antler/testing` ships it. */
export * from "../../src/testing/mock-model.js";
