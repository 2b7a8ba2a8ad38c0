/**
 * A fetch for OpenAI-compatible model clients that notices a stalled stream: a response whose
 * headers, or next bytes, do not arrive within `idleMs`. A stream that stalls before it delivered
 * any byte is requested again once (the user has seen nothing of it); a later stall ends the
 * stream with a `ModelStallError`, which the run reports as a model that stopped answering.
 * Without this a stalled stream holds its run until the run timeout.
 */

/** The model sent nothing for longer than the idle limit. */
export class ModelStallError extends Error {
  override readonly name = "ModelStallError";
}

type Fetch = typeof fetch;

/** Requests again after a stall before the first byte, at most this often. */
const RETRIES = 1;

export function stallGuardedFetch(idleMs: number, base: Fetch = fetch): Fetch {
  return async (input, init) => {
    let first = await fetchWithin(base, input, init, idleMs, RETRIES);
    let reader = first.response.body?.getReader();
    if (!reader) return first.response;
    let retries = first.retriesLeft;
    let forwarded = false;
    // One timer for the whole stream, armed only while a read waits for the network: a slow
    // reader (the caller not pulling) is not a stalled model. When it fires it cancels the
    // body, which ends the waiting read; no timer or promise race per chunk.
    let waiting = false;
    let stalled = false;
    const timer = setTimeout(() => {
      if (!waiting) return;
      stalled = true;
      void reader?.cancel().catch(() => undefined);
    }, idleMs);
    timer.unref();
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        for (;;) {
          waiting = true;
          timer.refresh();
          let next: Awaited<ReturnType<ReadableStreamDefaultReader<Uint8Array>["read"]>>;
          try {
            next = await reader!.read();
          } catch (err) {
            clearTimeout(timer);
            throw err;
          } finally {
            waiting = false;
          }
          if (!stalled) {
            if (next.done) {
              clearTimeout(timer);
              controller.close();
            } else {
              forwarded = true;
              controller.enqueue(next.value);
            }
            return;
          }
          stalled = false;
          if (forwarded || retries <= 0) {
            clearTimeout(timer);
            controller.error(new ModelStallError(`the model sent nothing for ${idleMs} ms`));
            return;
          }
          // Nothing reached the caller yet: ask again and read the new answer instead.
          first = await fetchWithin(base, input, init, idleMs, retries - 1);
          retries = first.retriesLeft;
          const again = first.response;
          if (!again.ok || !again.body) {
            clearTimeout(timer);
            controller.error(new ModelStallError(`the model stalled, and asked again it answered HTTP ${again.status}`));
            return;
          }
          reader = again.body.getReader();
        }
      },
      cancel(reason) {
        clearTimeout(timer);
        return reader?.cancel(reason);
      },
    });
    const { status, statusText, headers } = first.response;
    return new Response(body, { status, statusText, headers });
  };
}

/** Fetches, giving up on a response whose headers take longer than `idleMs` (and asking again while retries last). */
async function fetchWithin(
  base: Fetch,
  input: Parameters<Fetch>[0],
  init: Parameters<Fetch>[1],
  idleMs: number,
  retries: number,
): Promise<{ response: Response; retriesLeft: number }> {
  for (;;) {
    const controller = new AbortController();
    const caller = init?.signal;
    const forward = () => controller.abort(caller?.reason);
    if (caller?.aborted) forward();
    caller?.addEventListener("abort", forward, { once: true });
    const stall = new ModelStallError(`the model sent no answer for ${idleMs} ms`);
    const timer = setTimeout(() => controller.abort(stall), idleMs);
    try {
      // The caller's signal stays linked after this: it must still cancel the body.
      return { response: await base(input, { ...init, signal: controller.signal }), retriesLeft: retries };
    } catch (err) {
      caller?.removeEventListener("abort", forward);
      if (controller.signal.reason !== stall) throw err;
      if (retries <= 0) throw stall;
      retries--;
    } finally {
      clearTimeout(timer);
    }
  }
}
