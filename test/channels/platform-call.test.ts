/** The kit's one platform-call helper: what it maps, what it notes on the channel's status, and what it skips. */
import { describe, expect, it } from "vitest";
import { ChannelLifecycle } from "../../src/channels/kit/lifecycle.js";
import { PlatformCalls } from "../../src/channels/kit/platform-call.js";
import { ChannelError, FileTooLargeError, NotModifiedError, PlatformRateLimitError } from "../../src/errors.js";

function calls() {
  const life = new ChannelLifecycle("chat", "test");
  const map = (channel: string, err: unknown, what: string) =>
    err instanceof ChannelError ? err : new ChannelError(channel, "platform_error", `${what}: ${String(err)}`);
  return { life, calls: new PlatformCalls("chat", map, life) };
}

describe("PlatformCalls", () => {
  it("maps a failure with the adapter's mapper and notes it as the last error", async () => {
    const { life, calls: c } = calls();
    const err = await c.run("send", () => Promise.reject("boom")).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: "platform_error", message: "[chat] send: boom" });
    expect(life.status().lastError?.message).toBe("[chat] send: boom");
  });

  it("returns what the call returns", async () => {
    const { calls: c } = calls();
    expect(await c.run("send", async () => 42)).toBe(42);
  });

  it("leaves the status alone for an unchanged edit and a file over a limit; a rate limit counts", async () => {
    const { life, calls: c } = calls();
    await c.run("edit", () => Promise.reject(new NotModifiedError("chat"))).catch(() => {});
    await c.run("download", () => Promise.reject(new FileTooLargeError("chat", 10, 20))).catch(() => {});
    expect(life.status().lastError).toBeNull();
    await c.run("send", () => Promise.reject(new PlatformRateLimitError("chat", 1000, "slow down"))).catch(() => {});
    expect(life.status().lastError?.message).toContain("slow down");
  });

  it("rejects with the signal's reason when the core stopped the call, noting nothing", async () => {
    const { life, calls: c } = calls();
    const abort = new AbortController();
    abort.abort(new Error("stopped by /stop"));
    const err = await c.run("download", () => Promise.reject(new Error("socket closed")), abort.signal).catch((e: unknown) => e);
    expect((err as Error).message).toBe("stopped by /stop");
    expect(life.status().lastError).toBeNull();
  });
});
