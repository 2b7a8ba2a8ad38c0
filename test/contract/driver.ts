/** What a contract driver provides; it lives in src/testing so `antler/testing` ships it. */
export type * from "../../src/testing/driver.js";
