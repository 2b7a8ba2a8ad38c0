/**
 * Taking a request in (`POST /api/send`, `POST /api/runs`): the target checked, the entry
 * written to the outbox under its idempotency key before the caller hears "accepted", and the
 * worker nudged. The same key with the same body finds the first entry; with another body it is
 * refused. Where the channel runs on this replica, a chat or a person is resolved now, so a
 * target the platform cannot reach is refused at once with the platform's reason.
 */
import { createHash, randomUUID } from "node:crypto";
import type { OutboxEntry, OutboxKind } from "../../bindings/outbox.js";
import type { SendTarget } from "../../channels/types.js";
import { AntlerError } from "../../errors.js";
import type { ChannelScope } from "../scope.js";
import { isPermanent } from "./failures.js";
import { type OutboxFile, type OutboxTarget, payloadJson, provisionalKey, type RunPayload, type SendPayload } from "./payload.js";
import { refOfKey, resolveSpec } from "./targets.js";

/** A conversation by its key, or a chat or person for the channel to resolve. */
export type RequestTarget = { key: string } | SendTarget;

export type AcceptRequest =
  | { kind: "send"; channel: string; target: RequestTarget; text: string; files?: OutboxFile[] }
  | { kind: "run"; channel: string; target: RequestTarget; prompt: string; agent?: string; thread?: "fresh" | "conversation" };

/** A request refused, with the HTTP status that says why. */
export class RefusedRequest extends AntlerError {
  constructor(
    readonly status: 404 | 409 | 422,
    code: string,
    message: string,
  ) {
    super(code, message);
  }
}

export interface AcceptDeps {
  /** The scope of a configured channel, running here or not. */
  scopeOf(channel: string): ChannelScope | undefined;
  /** Whether the channel runs on this replica now. */
  runsHere(channel: string): boolean;
  hasAgent(tenant: string, agent: string): boolean;
  /** Starts the worker on the new entry. */
  nudge(): void;
}

export async function accept(
  deps: AcceptDeps,
  request: AcceptRequest,
  idempotencyKey: string,
): Promise<{ entry: OutboxEntry; replayed: boolean }> {
  const scope = deps.scopeOf(request.channel);
  if (!scope) throw new RefusedRequest(404, "unknown_channel", `no channel named ${request.channel}`);
  const { store } = scope;
  const bodyHash = createHash("sha256").update(JSON.stringify(request)).digest("hex");
  const known = await store.getOutboundByKey(idempotencyKey);
  if (known) return replay(known, bodyHash);
  if (request.kind === "run" && request.agent && !deps.hasAgent(scope.tenant, request.agent)) {
    throw new RefusedRequest(422, "unknown_agent", `no agent named ${request.agent} serves ${request.channel}'s tenant`);
  }
  const { target, key } = await targetOf(deps, scope, request.target);
  const payload: SendPayload | RunPayload =
    request.kind === "send"
      ? { target, text: request.text, ...(request.files?.length ? { files: request.files } : {}) }
      : {
          target,
          prompt: request.prompt,
          ...(request.agent ? { agent: request.agent } : {}),
          ...(request.thread ? { thread: request.thread } : {}),
        };
  const { entry, created } = await store.enqueueOutbound({
    id: randomUUID(),
    idempotencyKey,
    bodyHash,
    kind: request.kind as OutboxKind,
    channel: request.channel,
    key,
    payload: payloadJson(payload),
    source: "api",
  });
  if (!created) return replay(entry, bodyHash);
  deps.nudge();
  return { entry, replayed: false };
}

function replay(entry: OutboxEntry, bodyHash: string): { entry: OutboxEntry; replayed: boolean } {
  if (entry.bodyHash !== bodyHash) {
    throw new RefusedRequest(409, "idempotency_conflict", "this Idempotency-Key was used before with another body");
  }
  return { entry, replayed: true };
}

/** The target as stored, and the key that orders the conversation's entries. */
async function targetOf(
  deps: AcceptDeps,
  scope: ChannelScope,
  target: RequestTarget,
): Promise<{ target: OutboxTarget; key: string }> {
  const channel = scope.name;
  try {
    if ("key" in target && typeof target.key === "string") {
      if (!target.key.startsWith(`${channel}:`)) {
        throw new RefusedRequest(422, "bad_target", `conversation key ${target.key} is not one of ${channel}'s`);
      }
      await refOfKey(scope.store, channel, target.key);
      return { target: { key: target.key }, key: target.key };
    }
    const spec = target as SendTarget;
    // Ordered by the target as named wherever the request came in: an entry resolved here and
    // one a replica without the channel stored unresolved must still wait for each other.
    const key = provisionalKey(channel, spec);
    if (!deps.runsHere(channel)) return { target: { spec }, key };
    const ref = await resolveSpec(scope.channel, spec);
    return { target: { ref }, key };
  } catch (err) {
    if (err instanceof RefusedRequest) throw err;
    // Unreachable, or a channel that cannot send first: the caller hears why now. Anything else
    // (the platform down for a moment) is the worker's to try again.
    if (isPermanent(err)) throw new RefusedRequest(422, (err as AntlerError).code, (err as Error).message);
    if (!("key" in target)) return { target: { spec: target as SendTarget }, key: provisionalKey(channel, target as SendTarget) };
    throw err;
  }
}
