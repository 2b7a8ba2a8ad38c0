/**
 * The supervisor on its own, with fake timers: exponential backoff between restart attempts,
 * capped, and back to the first delay once the channel ran again.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { ChannelSlot } from "../../src/channels/registry.js";
import type { Channel, ChannelState } from "../../src/channels/types.js";
import { silentLogger } from "../../src/log/logger.js";
import { Supervisor } from "../../src/supervisor.js";

afterEach(() => {
  vi.useRealTimers();
});

function fakeSlot(): { slot: ChannelSlot; setState: (s: ChannelState) => void } {
  let state: ChannelState = "running";
  const channel = { status: () => ({ state, connected: state === "running", mode: "fake" }) } as unknown as Channel;
  const slot = new ChannelSlot("fake", true, { enabled: true } as never);
  slot.channel = channel;
  return { slot, setState: (s) => (state = s) };
}

describe("Supervisor", () => {
  it("doubles the wait after each failed restart, caps it, and starts over after a success", async () => {
    vi.useFakeTimers({ now: 0 });
    const { slot, setState } = fakeSlot();
    const attempts: number[] = [];
    let heals = false;
    const supervisor = new Supervisor(
      () => [slot],
      async () => {
        attempts.push(Date.now());
        setState(heals ? "running" : "failed");
      },
      silentLogger(),
      { baseDelayMs: 100, maxDelayMs: 400, pollMs: 10 },
    );
    supervisor.start();
    setState("failed");
    await vi.advanceTimersByTimeAsync(2_000);
    const gaps = attempts.map((at, i) => at - (attempts[i - 1] ?? 0));
    // Each gap is the backoff plus at most one poll before the failure was noticed.
    expect(gaps.slice(0, 5).map((g) => Math.round(g / 10) * 10)).toEqual([110, 210, 410, 410, 410]);

    heals = true;
    await vi.advanceTimersByTimeAsync(500);
    expect(slot.report().state).toBe("running");
    const healedAt = attempts.length;
    heals = false;
    const failedAt = Date.now();
    setState("failed");
    await vi.advanceTimersByTimeAsync(150);
    expect(attempts).toHaveLength(healedAt + 1);
    expect(attempts.at(-1)! - failedAt).toBeLessThanOrEqual(120);
    supervisor.stop();
    await vi.advanceTimersByTimeAsync(2_000);
    expect(attempts).toHaveLength(healedAt + 1);
  });
});
