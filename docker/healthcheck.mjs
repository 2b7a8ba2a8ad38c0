// The image's HEALTHCHECK: healthy when the gateway's GET /readyz answers 200 on the port of the
// config it was started with. That config is the file given as the first argument, else the
// --config of the running `antler start` (read from /proc/1/cmdline, the container's main
// process), else /config/config.yaml. Antler's own config loader reads it, so the check probes
// exactly the port the server binds. Exit 0 = ready; 1 = not, with the reason on stdout (which
// `docker inspect --format '{{json .State.Health}}' <container>` shows).
import { readFileSync, readlinkSync } from "node:fs";
import path from "node:path";
import { loadConfig } from "../dist/config/loader.js";

/** The --config (or -c) of the container's main process, resolved against its working folder. */
function startedWith() {
  try {
    const args = readFileSync("/proc/1/cmdline", "utf8").split("\0");
    const at = args.findIndex((a) => a === "--config" || a === "-c");
    const inline = args.find((a) => a.startsWith("--config="));
    const file = at >= 0 ? args[at + 1] : inline?.slice("--config=".length);
    if (file) return path.resolve(readlinkCwd(), file);
  } catch {
    // not Linux, or not allowed to read: fall back to the image's default
  }
  return "/config/config.yaml";
}

/** The main process's working folder, against which its --config was given. */
function readlinkCwd() {
  try {
    return readlinkSync("/proc/1/cwd");
  } catch {
    return "/app"; // the image's WORKDIR
  }
}

/** The URL of /readyz on the address the server binds (a wildcard address is probed on loopback). */
function readyUrl(file) {
  const { config } = loadConfig({ file, env: process.env });
  const bound = config.server.host;
  const host = bound === "0.0.0.0" || bound === "::" || bound === "" ? "127.0.0.1" : bound;
  return `http://${host.includes(":") ? `[${host}]` : host}:${config.server.port}/readyz`;
}

let url = "";
try {
  url = readyUrl(process.argv[2] ?? startedWith());
  const res = await fetch(url, { signal: AbortSignal.timeout(4000) });
  if (!res.ok) console.log(`${url}: ${res.status} ${await res.text()}`);
  process.exit(res.ok ? 0 : 1);
} catch (err) {
  console.log(`${url || "config"}: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
}
