/**
 * Runs before every test file. A wait's deadline is a safety net against a hang, not a measure
 * of speed: with both cores busy a condition that takes 100 ms on a quiet machine can take
 * seconds. Every `eventually` (and the rigs' `waitFor`, which use it) therefore waits at least
 * 15 s before failing; a passing test never waits longer than its condition takes. Speed is
 * measured in the benchmarks, not here.
 */
import { setWaitFloor } from "../../src/testing/wait.js";

setWaitFloor(15_000);
