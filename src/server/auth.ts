/**
 * Request auth shared by every HTTP face: who is calling from this machine, and a token compared
 * in constant time. The admin API and the web chat both check callers with these.
 */
import { createHash, timingSafeEqual } from "node:crypto";

/** True for addresses of this machine's loopback interface (all of 127.0.0.0/8 and ::1). */
export function isLoopback(address: string | undefined): boolean {
  if (!address) return false;
  return address === "::1" || address.startsWith("127.") || address.startsWith("::ffff:127.");
}

function digest(text: string): Buffer {
  return createHash("sha256").update(text).digest();
}

/** Compares the presented token with the configured one in constant time. */
export function tokenMatches(presented: string, expected: string): boolean {
  return timingSafeEqual(digest(presented), digest(expected));
}
