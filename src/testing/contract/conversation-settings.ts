/**
 * The binding-store contract's settings part (`ConversationSettings` in src/bindings/types.ts):
 * each conversation's own settings by name, set, overwritten and cleared one at a time, and kept
 * apart per conversation, per name and per tenant.
 */
import { expect, it } from "vitest";
import type { Subject } from "./outbox.js";

export function settingsPart(s: Subject): void {
  it("sets, overwrites and clears a conversation's setting", async () => {
    expect(await s.store.conversationSetting("k", "queue")).toBeUndefined();
    await s.store.setConversationSetting("k", "queue", "steer");
    expect(await s.store.conversationSetting("k", "queue")).toBe("steer");
    s.now += 10;
    await s.store.setConversationSetting("k", "queue", "collect");
    expect(await s.store.conversationSetting("k", "queue")).toBe("collect");
    await s.store.setConversationSetting("k", "queue", undefined);
    expect(await s.store.conversationSetting("k", "queue")).toBeUndefined();
    // Clearing what is not set does nothing, and setting it again works.
    await s.store.setConversationSetting("k", "queue", undefined);
    await s.store.setConversationSetting("k", "queue", "interrupt");
    expect(await s.store.conversationSetting("k", "queue")).toBe("interrupt");
  });

  it("keeps an empty string as a value: only undefined clears", async () => {
    await s.store.setConversationSetting("k", "note", "");
    expect(await s.store.conversationSetting("k", "note")).toBe("");
  });

  it("keeps each conversation's settings and each name apart", async () => {
    await s.store.setConversationSetting("k1", "queue", "steer");
    await s.store.setConversationSetting("k1", "progress", "full");
    await s.store.setConversationSetting("k2", "queue", "collect");
    expect(await s.store.conversationSetting("k1", "queue")).toBe("steer");
    expect(await s.store.conversationSetting("k1", "progress")).toBe("full");
    expect(await s.store.conversationSetting("k2", "queue")).toBe("collect");
    expect(await s.store.conversationSetting("k2", "progress")).toBeUndefined();
    expect(await s.store.conversationSetting("k3", "queue")).toBeUndefined();
    await s.store.setConversationSetting("k1", "queue", undefined);
    expect(await s.store.conversationSetting("k1", "queue")).toBeUndefined();
    expect(await s.store.conversationSetting("k1", "progress")).toBe("full");
    expect(await s.store.conversationSetting("k2", "queue")).toBe("collect");
    // Settings are not the picked agent, and a new thread leaves them as they were.
    await s.store.bindThread("k2", "t2");
    expect(await s.store.chosenAgent("k2")).toBeUndefined();
    expect(await s.store.conversationSetting("k2", "queue")).toBe("collect");
  });

  it("keeps each tenant's settings apart under the same conversation and name", async () => {
    const a = s.store.forTenant("a");
    const b = s.store.forTenant("b");
    await a.setConversationSetting("k", "queue", "steer");
    expect(await b.conversationSetting("k", "queue")).toBeUndefined();
    expect(await s.store.conversationSetting("k", "queue")).toBeUndefined();
    // b's writes and clears under the same key and name touch only b's row.
    await b.setConversationSetting("k", "queue", "interrupt");
    expect(await a.conversationSetting("k", "queue")).toBe("steer");
    expect(await b.conversationSetting("k", "queue")).toBe("interrupt");
    await b.setConversationSetting("k", "queue", undefined);
    expect(await a.conversationSetting("k", "queue")).toBe("steer");
    expect(await b.conversationSetting("k", "queue")).toBeUndefined();
    // Views made again see the same rows: the settings live in the storage, not the view.
    expect(await s.store.forTenant("a").conversationSetting("k", "queue")).toBe("steer");
  });
}
