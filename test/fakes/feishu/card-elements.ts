/**
 * CardKit's element operations on a card entity, as Feishu checks them: add elements before or
 * after one (or at the end), replace one, delete one (a container with what it holds), each
 * found by `element_id`. The card must stay valid afterwards (ids unique and well formed), and
 * a card in exclusive mode (`update_multi: false`) takes none of them. The caller (openapi-ops.ts)
 * has checked the card, its rate and the sequence already.
 */
import { type CardElement, type CardJson, cardProblem } from "./model.js";

export type ElementOp = "element_create" | "element_update" | "element_delete";

export interface ElementFailure {
  code: number;
  msg: string;
}

/** Applies the operation to `card`; returns the refusal, or undefined when the card changed. */
export function applyElementOp(
  card: CardJson,
  op: ElementOp,
  elementId: string | undefined,
  body: Record<string, unknown>,
): ElementFailure | undefined {
  if (card.config?.update_multi === false) return { code: 300311, msg: "exclusive cards cannot be updated" };
  const next = structuredClone(card);
  const top = next.body?.elements ?? [];
  let failure: ElementFailure | undefined;
  if (op === "element_create") failure = insert(top, body);
  else {
    const place = find(top, elementId ?? "");
    if (!place) return { code: 300302, msg: `element ${String(elementId)} not found` };
    if (op === "element_delete") place.list.splice(place.index, 1);
    else {
      const element = parseJson(body.element);
      if (!element || Array.isArray(element) || typeof element !== "object")
        return { code: 300303, msg: "element must be a JSON object string" };
      place.list[place.index] = element as CardElement;
    }
  }
  if (failure) return failure;
  const problem = cardProblem(next);
  if (problem) return { code: 300303, msg: problem };
  Object.assign(card, next);
  return undefined;
}

function insert(top: CardElement[], body: Record<string, unknown>): ElementFailure | undefined {
  const elements = parseJson(body.elements);
  if (!Array.isArray(elements) || elements.length === 0) return { code: 300303, msg: "elements must be a JSON list string" };
  const target = typeof body.target_element_id === "string" ? body.target_element_id : undefined;
  if (body.type === "append") {
    const container = target ? find(top, target) : undefined;
    if (target && !container) return { code: 300302, msg: `element ${target} not found` };
    const list = container ? (container.list[container.index]?.elements ?? undefined) : top;
    if (!list) return { code: 300303, msg: `element ${target} is not a container` };
    list.push(...(elements as CardElement[]));
    return undefined;
  }
  if (body.type !== "insert_before" && body.type !== "insert_after")
    return { code: 300303, msg: "type must be insert_before, insert_after or append" };
  const place = target ? find(top, target) : undefined;
  if (!place) return { code: 300302, msg: `target element ${String(target)} not found` };
  place.list.splice(place.index + (body.type === "insert_after" ? 1 : 0), 0, ...(elements as CardElement[]));
  return undefined;
}

/** Where the element with `id` sits: its list and index, searched through containers. */
function find(list: CardElement[], id: string): { list: CardElement[]; index: number } | undefined {
  for (const [index, el] of list.entries()) {
    if (el.element_id === id) return { list, index };
    const inner = (el.elements && find(el.elements, id)) || findInColumns(el, id);
    if (inner) return inner;
  }
  return undefined;
}

function findInColumns(el: CardElement, id: string): { list: CardElement[]; index: number } | undefined {
  for (const col of el.columns ?? []) {
    const inner = find(col.elements ?? [], id);
    if (inner) return inner;
  }
  return undefined;
}

function parseJson(value: unknown): unknown {
  if (typeof value !== "string") return undefined;
  try {
    return JSON.parse(value);
  } catch {
    return undefined;
  }
}
