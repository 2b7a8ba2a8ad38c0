/** The embedded agent, built from config, passes the harness contract. */

import { harnessContract, progressTool } from "../../src/testing/index.js";
import { startHarness, subjectOver } from "./helpers.js";

harnessContract("embedded", () => subjectOver(async (mock) => (await startHarness(mock, {}, [progressTool()])).harness));
