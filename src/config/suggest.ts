/**
 * "Did you mean …?" for config: the known key nearest to a misspelt one, and the keys a schema
 * allows at a key path (read from the zod schema itself, so the suggestions never drift).
 */
import type { z } from "zod";

/** Edit distance with adjacent swaps counting as one edit (`enabeld` is one away from `enabled`). */
function distance(a: string, b: string): number {
  const rows = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) (rows[0] as number[])[j] = j;
  for (let i = 1; i <= a.length; i++) {
    const row = rows[i] as number[];
    const above = rows[i - 1] as number[];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      row[j] = Math.min((above[j] as number) + 1, (row[j - 1] as number) + 1, (above[j - 1] as number) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        row[j] = Math.min(row[j] as number, ((rows[i - 2] as number[])[j - 2] as number) + 1);
      }
    }
  }
  return (rows[a.length] as number[])[b.length] as number;
}

/** The candidate nearest to `word`, when it is close enough to be a typo of it. */
export function nearest(word: string, candidates: Iterable<string>): string | undefined {
  const lower = word.toLowerCase();
  const limit = Math.max(1, Math.min(3, Math.floor(word.length / 3)));
  let best: { name: string; d: number } | undefined;
  for (const name of candidates) {
    const d = distance(lower, name.toLowerCase());
    if (d <= limit && (!best || d < best.d)) best = { name, d };
  }
  return best?.name;
}

interface Def {
  type: string;
  shape?: Record<string, z.ZodType>;
  innerType?: z.ZodType;
  in?: z.ZodType;
  out?: z.ZodType;
  element?: z.ZodType;
  valueType?: z.ZodType;
}

const defOf = (schema: z.ZodType | undefined): Def | undefined =>
  (schema as unknown as { _zod?: { def: Def } } | undefined)?._zod?.def;

/** The object schema under wrappers (optional, default, preprocess, transform), if there is one. */
function unwrap(schema: z.ZodType | undefined): Def | undefined {
  for (let depth = 0; depth < 10; depth++) {
    const def = defOf(schema);
    if (!def) return undefined;
    if (def.innerType) schema = def.innerType;
    else if (def.type === "pipe") schema = defOf(def.out)?.type === "transform" ? def.in : def.out;
    else return def;
  }
  return undefined;
}

/** The keys an object schema allows at `path` (through arrays and records); empty when unknown. */
export function keysAt(schema: z.ZodType, path: ReadonlyArray<PropertyKey>): string[] {
  let def = unwrap(schema);
  for (const part of path) {
    if (!def) return [];
    if (def.type === "array") def = unwrap(def.element);
    else if (def.type === "record") def = unwrap(def.valueType);
    else if (def.type === "object") def = unwrap(def.shape?.[String(part)]);
    else return [];
  }
  return def?.type === "object" ? Object.keys(def.shape ?? {}) : [];
}
