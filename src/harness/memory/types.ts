/**
 * Memory per person, as the rest of Antler sees it: the facts kept about one person, and what
 * the chat layer may do with them (`/memory`). The facts themselves live in the tenant's LangGraph
 * store (book.ts); the harness offers a `PersonMemory` as `Harness.memory` when its agent has
 * memory on.
 */

/** One thing remembered about a person. */
export interface MemoryFact {
  /** Short and stable: the agent's tools name a fact by it. */
  id: string;
  /** One short sentence about the person ("Lives in Lisbon"). */
  text: string;
  /** A word that groups facts (`identity`, `preference`, `work`…), when one was given. */
  category?: string;
  /** When it was first kept, in ms since the epoch. */
  createdAt: number;
  /** When it was last written or confirmed, in ms; the fact updated longest ago goes first when the book is full. */
  updatedAt: number;
}

/** A person's facts, for the chat layer's `/memory`. */
export interface PersonMemory {
  /** Whether memory is used in a chat of this type (`direct`, `group`): `agent.memory.groups` decides for groups. */
  usedIn(chatType: string | undefined): boolean;
  /** The person's facts, oldest first (the order `/memory` numbers them in). */
  list(personId: string): Promise<MemoryFact[]>;
  /** Forgets one fact; the fact, or undefined when it was not there. */
  forget(personId: string, id: string): Promise<MemoryFact | undefined>;
  /** Forgets all of the person's facts; how many there were. */
  clear(personId: string): Promise<number>;
  /** Resolves once the memory work under way (a turn's extraction) is done: the person's, or everyone's. */
  settled(personId?: string): Promise<void>;
}
