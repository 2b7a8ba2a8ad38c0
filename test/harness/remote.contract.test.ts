/** The `remote` backend against a real LangGraph API server in this process passes the harness contract. */
import { harnessContract } from "../../src/testing/index.js";
import { useLangGraphServer } from "./remote-helpers.js";

const lg = useLangGraphServer();

harnessContract("remote (LangGraph API server)", () => lg.subject());
