/** The shared start/stop/status of every adapter (src/channels/kit/lifecycle.ts). */
import { describe, expect, it } from "vitest";
import { ChannelLifecycle, LifecycleChannel } from "../../src/channels/kit/lifecycle.js";
import type { InboundSink } from "../../src/channels/types.js";
import { ChannelError } from "../../src/errors.js";

/** An `open` that waits until released, counting what it made and what `close` released. */
function gate() {
  let release!: () => void;
  const opened = new Promise<void>((r) => {
    release = r;
  });
  const counts = { opens: 0, closes: 0, live: 0 };
  return {
    counts,
    release: () => release(),
    open: async (signal: AbortSignal) => {
      counts.opens++;
      await opened;
      // Like an adapter whose SDK call ignores the signal: it makes its socket anyway.
      counts.live = 1;
      void signal;
    },
    close: async () => {
      counts.closes++;
      counts.live = 0;
    },
  };
}

describe("ChannelLifecycle", () => {
  it("starts, reports running, stops, and starts again", async () => {
    const life = new ChannelLifecycle("c", "socket");
    const g = gate();
    g.release();
    await life.start(g.open, g.close);
    expect(life.status()).toMatchObject({ state: "running", connected: true, mode: "socket" });
    await life.stop(g.close);
    expect(life.status()).toMatchObject({ state: "stopped", connected: false });
    await life.start(g.open, g.close);
    expect(life.status().state).toBe("running");
    expect(g.counts.opens).toBe(2);
  });

  it("a stop during start rejects the start with code stopped and releases what it made late", async () => {
    const life = new ChannelLifecycle("c", "socket");
    const g = gate();
    const starting = life.start(g.open, g.close).catch((e: unknown) => e);
    expect(life.status().state).toBe("starting");
    await life.stop(g.close);
    expect(life.status()).toMatchObject({ state: "stopped", connected: false });
    g.release();
    const err = await starting;
    expect(err).toBeInstanceOf(ChannelError);
    expect(err).toMatchObject({ code: "stopped", channel: "c" });
    expect(g.counts.live).toBe(0);
    expect(life.status().state).toBe("stopped");
  });

  it("a start after a stop during start waits for the aborted one to unwind, then runs once", async () => {
    const life = new ChannelLifecycle("c", "socket");
    const g = gate();
    const first = life.start(g.open, g.close).catch((e: unknown) => e);
    await life.stop(g.close);
    const second = life.start(g.open, g.close);
    g.release();
    await second;
    expect(await first).toMatchObject({ code: "stopped" });
    expect(g.counts.live).toBe(1);
    expect(life.status().state).toBe("running");
  });

  it("a second start joins the first; a double stop is harmless", async () => {
    const life = new ChannelLifecycle("c", "socket");
    const g = gate();
    const a = life.start(g.open, g.close);
    const b = life.start(g.open, g.close);
    g.release();
    await Promise.all([a, b]);
    await life.start(g.open, g.close);
    expect(g.counts.opens).toBe(1);
    await life.stop(g.close);
    await life.stop(g.close);
    expect(life.status()).toMatchObject({ state: "stopped", connected: false });
  });

  it("a failed start is failed with its reason, released, and can be started again", async () => {
    const life = new ChannelLifecycle("c", "webhook");
    let closes = 0;
    const close = async () => {
      closes++;
    };
    const err = await life
      .start(async () => {
        throw new Error("token rejected");
      }, close)
      .catch((e: unknown) => e);
    expect((err as Error).message).toBe("token rejected");
    expect(life.status()).toMatchObject({ state: "failed", reason: "token rejected", lastError: { message: "token rejected" } });
    expect(closes).toBe(1);
    await life.stop(close);
    expect(life.status().state).toBe("failed");
    await life.start(async () => undefined, close);
    expect(life.status().state).toBe("running");
  });

  it("tracks connected and degraded(reason) reports while running, and ignores them when stopped", async () => {
    const life = new ChannelLifecycle("c", "socket");
    await life.start(
      async () => ({ degraded: "socket not up yet" }),
      async () => {},
    );
    expect(life.status()).toMatchObject({ state: "degraded", connected: false, reason: "socket not up yet" });
    life.connected();
    expect(life.status()).toMatchObject({ state: "running", connected: true });
    expect(life.status().reason).toBeUndefined();
    life.degraded("socket dropped");
    expect(life.status()).toMatchObject({ state: "degraded", reason: "socket dropped" });
    await life.stop(async () => {});
    life.connected();
    expect(life.status()).toMatchObject({ state: "stopped", connected: false });
  });

  it("keeps a drop reported while opening", async () => {
    const life = new ChannelLifecycle("c", "socket");
    await life.start(
      async () => {
        life.connected();
        life.degraded("dropped right after connecting");
      },
      async () => {},
    );
    expect(life.status()).toMatchObject({ state: "degraded", reason: "dropped right after connecting" });
  });
});

/** A LifecycleChannel whose `open` waits at a gate; `split` overrides `closeIntake` as an exclusive adapter does. */
class GatedChannel extends LifecycleChannel {
  readonly g = gate();
  intakeCloses = 0;

  constructor(private readonly split: boolean) {
    super("c", "socket", { exclusive: true });
  }

  report(up: boolean): void {
    if (up) this.life.connected();
    else this.life.degraded("the socket dropped");
  }

  protected open(_sink: InboundSink, signal: AbortSignal): Promise<void> {
    return this.g.open(signal);
  }

  protected close(): Promise<void> {
    return this.g.close();
  }

  protected override closeIntake(): Promise<void> {
    if (!this.split) return super.closeIntake();
    this.intakeCloses++;
    return Promise.resolve();
  }
}

describe("LifecycleChannel.stopIntake", () => {
  const sink: InboundSink = async () => undefined;

  it("ends only the intake of a running channel, which then shows degraded until it stops", async () => {
    const channel = new GatedChannel(true);
    channel.g.release();
    await channel.start(sink);
    await channel.stopIntake();
    expect(channel.intakeCloses).toBe(1);
    expect(channel.g.counts.closes).toBe(0);
    expect(channel.status()).toMatchObject({ state: "degraded", connected: false, reason: expect.stringMatching(/handed over/) });
    // A late report from the connection does not make it look like it takes messages again.
    channel.report(true);
    expect(channel.status().state).toBe("degraded");
    await channel.stop();
    expect(channel.g.counts.closes).toBe(1);
    expect(channel.status().state).toBe("stopped");
  });

  it("stops a channel that is still starting, so its intake cannot open after", async () => {
    const channel = new GatedChannel(true);
    const starting = channel.start(sink).catch((e: unknown) => e);
    await channel.stopIntake();
    channel.g.release();
    expect(await starting).toMatchObject({ code: "stopped" });
    expect(channel.g.counts.live).toBe(0);
    expect(channel.intakeCloses).toBe(0);
    expect(channel.status().state).toBe("stopped");
  });

  it("closes everything by default (an adapter that cannot keep its send path alone)", async () => {
    const channel = new GatedChannel(false);
    channel.g.release();
    await channel.start(sink);
    await channel.stopIntake();
    expect(channel.g.counts.closes).toBe(1);
    expect(channel.g.counts.live).toBe(0);
  });
});

describe("ChannelLifecycle as the one record of a channel's start", () => {
  it("says starting while a start runs and failed after a failed one, but not for a failure at run time", async () => {
    const life = new ChannelLifecycle("c", "webhook");
    const g = gate();
    const started = life.start(g.open, g.close);
    expect(life.startState()).toEqual({ state: "starting", reason: "connecting to the platform" });
    g.release();
    await started;
    expect(life.startState()).toBeUndefined();
    life.failed(new Error("token revoked"));
    expect(life.startState()).toBeUndefined();
    await life.stop(g.close);
    await life
      .start(async () => {
        throw new Error("token rejected");
      }, g.close)
      .catch(() => undefined);
    expect(life.startState()).toEqual({ state: "failed", reason: "token rejected" });
  });

  it("records what the core could not load or start, and keeps a previous instance's last error", () => {
    const life = new ChannelLifecycle("c", "webhook");
    life.startFailed(new Error("no such class"));
    expect(life.startState()).toEqual({ state: "failed", reason: "no such class" });
    life.opening();
    expect(life.startState()?.state).toBe("starting");
    life.opened();
    expect(life.startState()).toBeUndefined();
    const fresh = new ChannelLifecycle("c", "webhook");
    fresh.inherit({ message: "earlier", at: 1 });
    expect(fresh.status().lastError).toEqual({ message: "earlier", at: 1 });
  });
});
