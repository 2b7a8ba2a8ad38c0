/** What a renderer tells its observers (metrics, status) about the platform calls it makes. */

/** Observers for metrics and status. Every hook is optional and must not throw. */
export interface RenderHooks {
  /** A platform call succeeded: a new message, an edit, or a native-stream call. */
  onOutbound?(kind: "send" | "edit" | "stream"): void;
  /** The platform answered 429; no call goes to the channel for `retryAfterMs`. */
  onRateLimited?(retryAfterMs: number): void;
  /** The user saw the first text of the reply. */
  onFirstVisible?(): void;
  /** A platform call failed (not the run's own `error` event, not a 429, not "not modified"). */
  onError?(err: unknown): void;
}
