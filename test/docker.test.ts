/**
 * docker/: the Dockerfile's paths against the tree, the pinned base image, the health check on the
 * configured port's /readyz, the shipped docker/config.yaml (0.0.0.0, state in /data), and, where
 * a Docker engine answers `docker info`, a real image build.
 */
import { spawn, spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { loadConfig } from "../src/config/loader.js";
import { freePort } from "../src/testing/gateway.js";
import { ROOT, tempConfig } from "./helpers/cli.js";

const DOCKERFILE = readFileSync(path.join(ROOT, "docker/Dockerfile"), "utf8");
/** The Dockerfile's instructions, continuation lines joined, comments dropped. */
const INSTRUCTIONS = DOCKERFILE.replace(/\\\n/g, " ")
  .split("\n")
  .map((l) => l.trim())
  .filter((l) => l && !l.startsWith("#"));
const COPIES = INSTRUCTIONS.filter((l) => l.startsWith("COPY ")).map((l) => l.slice(5).trim().split(/\s+/));

const dockerEngine = spawnSync("docker", ["info"], { stdio: "ignore" }).status === 0;

describe("docker/Dockerfile", () => {
  it("copies only paths that exist in the tree", () => {
    const fromContext = COPIES.filter((args) => !args.some((a) => a.startsWith("--from=")));
    expect(fromContext.length).toBeGreaterThan(3);
    for (const args of fromContext) {
      for (const source of args.slice(0, -1)) expect(existsSync(path.join(ROOT, source)), `COPY ${source}`).toBe(true);
    }
  });

  it("copies from the build stage only what the build stage makes", () => {
    const fromBuild = COPIES.filter((args) => args[0] === "--from=build").map((args) => args[1]);
    expect(fromBuild.sort()).toEqual(["/app/dist", "/app/node_modules"]);
    expect(INSTRUCTIONS).toContain("RUN npm run build && npm prune --omit=dev");
    // npm run build runs scripts/build.mjs on the tsconfigs and src/, all copied in before it
    const built = COPIES.flatMap((args) => args.slice(0, -1));
    for (const needed of ["package.json", "package-lock.json", "tsconfig.json", "tsconfig.build.json", "scripts", "src"]) {
      expect(built, needed).toContain(needed);
    }
    expect(JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")).scripts.build).toBe("node scripts/build.mjs");
  });

  it("pins its base image to an exact Node release, in both stages", () => {
    const arg = INSTRUCTIONS.find((l) => l.startsWith("ARG NODE_IMAGE="));
    expect(arg).toMatch(/^ARG NODE_IMAGE=node:\d+\.\d+\.\d+(-[a-z]+)*$/);
    const froms = INSTRUCTIONS.filter((l) => l.startsWith("FROM "));
    expect(froms).toEqual(["FROM ${NODE_IMAGE} AS build", "FROM ${NODE_IMAGE}"]);
  });

  it("starts with the shipped config and checks readiness on its port, not ANTLER_PORT", () => {
    expect(DOCKERFILE).not.toContain("ANTLER_PORT");
    const health = INSTRUCTIONS.find((l) => l.startsWith("HEALTHCHECK "));
    expect(health).toContain('CMD ["node", "docker/healthcheck.mjs"]');
    expect(COPIES).toContainEqual(["docker/healthcheck.mjs", "./docker/healthcheck.mjs"]);
    expect(COPIES).toContainEqual(["docker/config.yaml", "/config/config.yaml"]);
    expect(INSTRUCTIONS).toContain('CMD ["start", "--config", "/config/config.yaml"]');
    expect(INSTRUCTIONS).toContain('VOLUME ["/data"]');
    expect(readFileSync(path.join(ROOT, "docker/healthcheck.mjs"), "utf8")).toContain("/readyz");
  });

  it("keeps secrets and local state out of the build context", () => {
    const ignored = readFileSync(path.join(ROOT, "docker/Dockerfile.dockerignore"), "utf8").split("\n");
    for (const entry of [".env", "config.yaml", "node_modules", "dist", "data", ".git"]) expect(ignored).toContain(entry);
  });
});

describe("docker/config.yaml", () => {
  const loaded = loadConfig({ file: path.join(ROOT, "docker/config.yaml"), env: {} });

  it("binds every interface on the exposed port and keeps its state in /data", () => {
    expect(loaded.config.server.host).toBe("0.0.0.0");
    expect(INSTRUCTIONS).toContain(`EXPOSE ${loaded.config.server.port}`);
    expect(loaded.config.storage.kind).toBe("sqlite");
    expect(loaded.config.storage.path).toMatch(/^\/data\//);
    expect(loaded.config.storage.files).toMatch(/^\/data\//);
  });

  it("turns on the web chat with its token from ANTLER_WEB_TOKEN, and platforms from the environment", () => {
    expect(loaded.config.channels.web?.enabled).toBe(true);
    const text = readFileSync(path.join(ROOT, "docker/config.yaml"), "utf8");
    expect(text).toMatch(/^ {4}token: \$\{ANTLER_WEB_TOKEN:-\}/m);
    const withTelegram = loadConfig({
      file: path.join(ROOT, "docker/config.yaml"),
      env: { TELEGRAM_ENABLED: "true", TELEGRAM_BOT_TOKEN: "123:abc" },
    });
    expect(withTelegram.config.channels.telegram?.enabled).toBe(true);
  });
});

describe("docker/compose files", () => {
  for (const name of ["compose.yaml", "compose.replicas.yaml"]) {
    it(`${name} builds from the repository with docker/Dockerfile and mounts files that exist`, () => {
      const compose = parse(readFileSync(path.join(ROOT, "docker", name), "utf8"), { merge: true }) as {
        services: Record<string, { build?: { context: string; dockerfile: string }; volumes?: string[] }>;
      };
      const builds = Object.values(compose.services).filter((s) => s.build);
      expect(builds.length).toBeGreaterThan(0);
      for (const service of Object.values(compose.services)) {
        if (service.build) {
          const context = path.resolve(ROOT, "docker", service.build.context);
          expect(context).toBe(ROOT);
          expect(existsSync(path.join(context, service.build.dockerfile))).toBe(true);
        }
        for (const mount of service.volumes ?? []) {
          const source = mount.split(":")[0] ?? "";
          // ./x is a file of this folder; ../config.yaml is the user's own config, not in the tree
          if (source.startsWith("./")) expect(existsSync(path.join(ROOT, "docker", source)), mount).toBe(true);
        }
      }
    });
  }
});

/**
 * docker/healthcheck.mjs in a folder whose ../dist/config/loader.js is Antler's loader from src/
 * (run under tsx), so the check runs as in the image without a build.
 */
function withSourceLoader(): string {
  const dir = mkdtempSync(path.join(tmpdir(), "antler-health-"));
  mkdirSync(path.join(dir, "docker"));
  mkdirSync(path.join(dir, "dist/config"), { recursive: true });
  writeFileSync(path.join(dir, "package.json"), '{ "type": "module" }\n'); // as Antler's own package.json
  const loader = pathToFileURL(path.join(ROOT, "src/config/loader.ts")).href;
  writeFileSync(path.join(dir, "dist/config/loader.js"), `export { loadConfig } from ${JSON.stringify(loader)};\n`);
  copyFileSync(path.join(ROOT, "docker/healthcheck.mjs"), path.join(dir, "docker/healthcheck.mjs"));
  return path.join(dir, "docker/healthcheck.mjs");
}

describe("docker/healthcheck.mjs", () => {
  let server: Server | undefined;
  let answer = 503;
  afterAll(() => server?.close());

  it("is healthy exactly when /readyz on the config's port answers 200", { timeout: 30_000 }, async () => {
    const script = withSourceLoader();
    const port = await freePort();
    server = createServer((req, res) => {
      res.statusCode = req.url === "/readyz" ? answer : 404;
      res.end(JSON.stringify({ ready: answer === 200 }));
    });
    await new Promise<void>((resolve) => server!.listen(port, "127.0.0.1", resolve));
    const config = tempConfig(`server:\n  host: 0.0.0.0\n  port: ${port}\n`);
    const check = () =>
      new Promise<{ code: number | null; out: string }>((resolve) => {
        // not spawnSync: the fake server answers from this process
        const child = spawn(process.execPath, ["--import", "tsx", script, config], { cwd: ROOT });
        let out = "";
        const collect = (d: Buffer) => {
          out += d.toString();
        };
        child.stdout.on("data", collect);
        child.stderr.on("data", collect);
        child.on("exit", (code: number | null) => resolve({ code, out }));
      });
    const notReady = await check();
    expect(notReady.code).toBe(1);
    expect(notReady.out).toContain(`127.0.0.1:${port}/readyz: 503`);
    answer = 200;
    expect((await check()).code).toBe(0);
  });
});

describe("the image", () => {
  const reason = dockerEngine ? "" : " (skipped: no Docker engine here, `docker info` fails)";
  it.skipIf(!dockerEngine)(`builds from docker/Dockerfile${reason}`, { timeout: 900_000 }, () => {
    const built = spawnSync("docker", ["build", "-f", "docker/Dockerfile", "-t", "antler:test", "."], {
      cwd: ROOT,
      encoding: "utf8",
    });
    expect(built.status, built.stderr).toBe(0);
    const listed = spawnSync(
      "docker",
      ["run", "--rm", "--entrypoint", "ls", "antler:test", "/app/dist/cli.js", "/config/config.yaml"],
      {
        encoding: "utf8",
      },
    );
    expect(listed.status, listed.stderr).toBe(0);
  });
});
