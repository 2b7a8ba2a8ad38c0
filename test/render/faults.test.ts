import { afterEach, describe, expect, it, vi } from "vitest";
import { SUPERSEDED } from "../../src/core/render/reply.js";
import { ChannelError, NotModifiedError, PlatformNotFoundError, PlatformRateLimitError } from "../../src/errors.js";
import { hookLog, loopback, render, Script } from "./helpers.js";
import { prng } from "./markdown-samples.js";

const words = (n: number) => Array.from({ length: n }, (_, i) => `w${i} `);
const serverError = () => new ChannelError("loop", "platform_unavailable", "internal server error");

afterEach(() => {
  vi.restoreAllMocks();
});

describe("renderRun: platform errors", () => {
  it("429 on 30% of edits: no call during retry_after, and the final text still arrives", async () => {
    // The fake draws its 429s from Math.random; seed it so the run is the same every time.
    vi.spyOn(Math, "random").mockImplementation(prng(42));
    const { world, channel, ref } = loopback({ minEditIntervalMs: 50 });
    world.rateLimitEdits(0.3, 120);
    const hooks = hookLog();
    const script = new Script(words(90), { gapMs: 10 });
    await render(channel, ref, script, hooks.hooks);

    const messages = world.botMessages();
    expect(messages.at(-1)!.text).toBe(script.text);
    expect(messages).toHaveLength(1);
    expect(world.calls.filter((c) => c.detail === "429").length).toBeGreaterThanOrEqual(2);
    expect(world.violations).toBe(0);
    expect(hooks.rateLimited.length).toBe(world.calls.filter((c) => c.detail === "429").length);
    expect(hooks.errors).toEqual([]);
  });

  it("a 429 on the final edit is waited out, never dropped", async () => {
    const { world, channel, ref } = loopback({ minEditIntervalMs: 30 });
    const script = new Script(words(20), {
      gapMs: 10,
      beforeEnd: () => world.failNext("edit", 2, () => new PlatformRateLimitError("loop", 150)),
    });
    await render(channel, ref, script);

    expect(world.botMessages()[0]!.text).toBe(script.text);
    const rejected = world.calls.filter((c) => c.op === "rejected");
    expect(rejected).toHaveLength(2);
    for (const r of rejected) {
      const next = world.calls[world.calls.indexOf(r) + 1];
      expect(next!.at - r.at).toBeGreaterThanOrEqual(150);
    }
  });

  it("treats 'message is not modified' as success", async () => {
    const { world, channel, ref } = loopback({ minEditIntervalMs: 30 });
    world.failNext("edit", 1, () => new NotModifiedError("loop"));
    const hooks = hookLog();
    const script = new Script(words(20), { gapMs: 10 });
    await render(channel, ref, script, hooks.hooks);

    expect(world.calls.some((c) => c.detail === "injected")).toBe(true);
    expect(world.botMessages()).toHaveLength(1);
    expect(world.botMessages()[0]!.text).toBe(script.text);
    expect(hooks.errors).toEqual([]);
  });

  it("posts a new message when the one being edited is gone", async () => {
    const { world, channel, ref } = loopback({ minEditIntervalMs: 30 });
    world.failNext("edit", 1, () => new PlatformNotFoundError("loop", "message to edit not found"));
    const script = new Script(words(20), { gapMs: 10 });
    const outcome = await render(channel, ref, script);

    const messages = world.botMessages();
    expect(messages).toHaveLength(2);
    expect(messages[1]!.text).toBe(script.text);
    expect(outcome.messages.map((m) => m.id)).toEqual([messages[1]!.id]);
  });

  it("posts the final text anew when its edit finds the message gone", async () => {
    const { world, channel, ref } = loopback({ minEditIntervalMs: 30 });
    const script = new Script(words(10), {
      gapMs: 10,
      beforeEnd: () => world.failNext("edit", 1, () => new PlatformNotFoundError("loop", "gone")),
    });
    await render(channel, ref, script);
    const messages = world.botMessages();
    expect(messages).toHaveLength(2);
    expect(messages[1]!.text).toBe(script.text);
  });

  it("logs failed intermediate edits and carries on", async () => {
    const { world, channel, ref } = loopback({ minEditIntervalMs: 30 });
    world.failNext("edit", 2, serverError);
    const hooks = hookLog();
    const script = new Script(words(30), { gapMs: 10 });
    await render(channel, ref, script, hooks.hooks);

    expect(world.botMessages()).toHaveLength(1);
    expect(world.botMessages()[0]!.text).toBe(script.text);
    expect(world.botMessages()[0]!.versions.length).toBeGreaterThan(2);
    expect(hooks.errors).toHaveLength(2);
  });

  it("retries a failing final edit with backoff for its budget, then posts the final text as a new message", async () => {
    const { world, channel, ref } = loopback({ minEditIntervalMs: 30 });
    const script = new Script(words(10), { gapMs: 10, beforeEnd: () => world.failNext("edit", 100, serverError) });
    await render(channel, ref, script, undefined, { retryBudgetMs: 1000 });

    const rejected = world.calls.filter((c) => c.detail === "injected");
    // The final edit is tried at 0, 250 and 750 ms (a fourth, 1 s later, would pass the budget);
    // then the partial's one try at pointing to the new copy fails too. An intermediate edit
    // still under way when the failures began may add one more.
    expect(rejected.length).toBeGreaterThanOrEqual(4);
    expect(rejected.length).toBeLessThanOrEqual(5);
    const [firstTry, , thirdTry] = rejected.slice(-4);
    expect(thirdTry!.at - firstTry!.at).toBeGreaterThanOrEqual(250 + 500);
    const messages = world.botMessages();
    expect(messages).toHaveLength(2);
    expect(messages[1]!.text).toBe(script.text);
  });

  it("a burst of 5xx on the final edit within the budget still lands in the same message", async () => {
    const { world, channel, ref } = loopback({ minEditIntervalMs: 30 });
    const script = new Script(words(10), { gapMs: 10, beforeEnd: () => world.failNext("edit", 4, serverError) });
    await render(channel, ref, script);
    const messages = world.botMessages();
    expect(messages).toHaveLength(1);
    expect(messages[0]!.text).toBe(script.text);
  });

  it("a partial left behind by a new copy is pointed at it, never left beside it", async () => {
    const { world, channel, ref } = loopback({ minEditIntervalMs: 30 });
    // Edits fail from the end of the run until the full copy is posted, then work again.
    let editsFail = false;
    const edit = channel.edit.bind(channel);
    const send = channel.send.bind(channel);
    Object.assign(channel, {
      edit: (...args: Parameters<typeof edit>) => (editsFail ? Promise.reject(serverError()) : edit(...args)),
      send: async (...args: Parameters<typeof send>) => {
        const handle = await send(...args);
        editsFail = false;
        return handle;
      },
    });
    const script = new Script(words(10), {
      gapMs: 10,
      beforeEnd: () => {
        editsFail = true;
      },
    });
    await render(channel, ref, script, undefined, { retryBudgetMs: 1000 });
    expect(world.botMessages().map((m) => m.text)).toEqual([SUPERSEDED, script.text]);
  });

  it("throws when the final text cannot be delivered at all", async () => {
    const { world, channel, ref } = loopback({ minEditIntervalMs: 30 });
    const script = new Script(words(10), {
      gapMs: 10,
      beforeEnd: () => {
        world.failNext("edit", 100, serverError);
        world.failNext("send", 100, serverError);
      },
    });
    await expect(render(channel, ref, script, undefined, { retryBudgetMs: 600 })).rejects.toThrow(/internal server error/);
  });
});
