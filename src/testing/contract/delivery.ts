/**
 * The contract's delivery part: an adapter acknowledges an event only after the core recorded it.
 * When recording fails the platform gets no ack (or a non-2xx), and its redelivery is answered once.
 */
import { describe, expect, it } from "vitest";
import { eventually, sleep } from "../gateway.js";
import { type ContractContext, timesHeard, withText } from "./shared.js";

export function deliveryContract(current: () => ContractContext): void {
  describe("delivery", () => {
    it("does not acknowledge an event the core could not record, and answers its redelivery once", async () => {
      const { driver, gateway, model } = current();
      const store = gateway.bindingStore;
      if (!store) throw new Error("the gateway has no store");
      const record = store.recordInbound.bind(store);
      let failures = 1;
      store.recordInbound = async (entry) => {
        if (failures-- > 0) throw new Error("disk full");
        return record(entry);
      };
      model.enqueue({ text: "Recorded on the second try." });
      await driver.userSays("record me, please");
      expect(await driver.lastDelivery(), "the platform's view of the first delivery").toBe("refused");
      await driver.redeliverLast();
      await eventually(withText(driver, "Recorded on the second try."), 15_000, "the reply to the redelivery");
      await sleep(400);
      expect(timesHeard(model, "record me, please")).toBe(1);
      expect(driver.botMessages().filter((m) => m.text === "Recorded on the second try.")).toHaveLength(1);
    });
  });
}
