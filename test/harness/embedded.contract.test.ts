/** The embedded agent, built from config, passes the harness contract. */

import { harnessContract } from "../../src/testing/index.js";
import { startMockModel } from "../fakes/openai.js";
import { startHarness } from "./helpers.js";

harnessContract("embedded", async () => {
  const mock = await startMockModel();
  const t = await startHarness(mock);
  return {
    harness: t.harness,
    mock,
    close: async () => {
      await t.harness.close();
      await mock.close();
    },
  };
});
