/**
 * The in-process test gateway of `antler/testing`, with this repository's one addition: the
 * ANTLER_TEST_LOG environment variable names a log level (silent by default).
 */
import {
  testLogger as makeLogger,
  startTestGateway as startGateway,
  type TestGateway,
  type TestGatewayOptions,
} from "../../src/testing/gateway.js";

export { eventually, freePort, sleep, type TestGateway, type TestGatewayOptions } from "../../src/testing/gateway.js";

export function testLogger() {
  return makeLogger(process.env.ANTLER_TEST_LOG ?? "silent");
}

export function startTestGateway(options: TestGatewayOptions): Promise<TestGateway> {
  return startGateway({ logger: testLogger(), ...options });
}
