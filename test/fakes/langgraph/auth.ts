/**
 * Custom auth for the test LangGraph API server (./server.ts): every request must carry the
 * key in `x-api-key`, like a deployed LangGraph Platform server. The expected key is read per
 * request from `ANTLER_TEST_LANGGRAPH_KEY` (default `antler-test-key`), so this module can be
 * imported before the test picks its key.
 */
import { Auth, HTTPException } from "@langchain/langgraph-sdk/auth";

export const API_KEY_ENV = "ANTLER_TEST_LANGGRAPH_KEY";
export const DEFAULT_API_KEY = "antler-test-key";

export const auth = new Auth().authenticate(async (request: Request) => {
  const expected = process.env[API_KEY_ENV] || DEFAULT_API_KEY;
  const given = request.headers.get("x-api-key");
  if (given !== expected) throw new HTTPException(401, { message: given ? "Invalid API key" : "Missing x-api-key header" });
  return { identity: "antler-test", permissions: [] };
});
