/**
 * Bounded memories of recent ids, for what an adapter remembers only as a convenience (threads
 * the bot is in, cards it posted, typing reactions it added). Past `max` entries the least
 * recently used one is forgotten, so a long-running channel never grows without end. Built on
 * `lru-cache`.
 */
import { LRUCache } from "lru-cache";

/** Ids seen lately; adding one again makes it the newest. */
export class RecentSet {
  private readonly items: LRUCache<string, true>;

  constructor(max: number) {
    this.items = new LRUCache({ max });
  }

  add(value: string): void {
    this.items.set(value, true);
  }

  has(value: string): boolean {
    return this.items.has(value);
  }
}

/** Values by id, the least recently used forgotten past `max` (an `LRUCache` keyed by string). */
export class RecentMap<V extends {}> extends LRUCache<string, V> {
  constructor(max: number) {
    super({ max });
  }
}
