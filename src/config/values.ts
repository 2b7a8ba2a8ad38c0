/**
 * Value helpers every section's schema uses: numbers, booleans and id lists that may arrive as
 * strings from `${VAR}` interpolation.
 */
import { z } from "zod";

/** A number that may also arrive as a string (from `${VAR}` interpolation). */
export const num = () =>
  z.preprocess((v) => (typeof v === "string" && v.trim() !== "" && Number.isFinite(Number(v)) ? Number(v) : v), z.number());

/** A boolean that may also arrive as "true"/"false" (from `${VAR}` interpolation). */
export const bool = () => z.preprocess((v) => (v === "true" ? true : v === "false" ? false : v), z.boolean());

/** A list of ids; a single string becomes a one-element list, an empty string an empty list. */
export const idList = () =>
  z.preprocess(
    (v) =>
      typeof v === "string"
        ? v
            .split(",")
            .map((s) => s.trim())
            .filter(Boolean)
        : typeof v === "number"
          ? [String(v)]
          : v,
    z.array(z.union([z.string(), z.number()]).transform(String)),
  );
