/**
 * Sizes a reader can hold in mind: no source file over 450 lines, no function over 80, and no
 * class of the message pipeline's pieces (the files of src/core; the reply writer in
 * src/core/render is one machine and only held to the file limit) over 250. Lines are counted
 * from a declaration's first line to its closing brace, comments included.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { ROOT } from "./helpers/cli.js";

const MAX_FILE = 450;
const MAX_FUNCTION = 80;
const MAX_CORE_CLASS = 250;

interface Measured {
  file: string;
  lines: number;
  functions: Array<{ name: string; line: number; lines: number }>;
  classes: Array<{ name: string; lines: number }>;
}

function measure(file: string): Measured {
  const text = readFileSync(file, "utf8");
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const lineOf = (pos: number) => source.getLineAndCharacterOfPosition(pos).line;
  const span = (node: ts.Node) => lineOf(node.getEnd()) - lineOf(node.getStart(source)) + 1;
  const out: Measured = { file: path.relative(ROOT, file), lines: text.split("\n").length, functions: [], classes: [] };
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && "body" in node && node.body) {
      const named = node.name ?? (node.parent as { name?: ts.Node }).name;
      out.functions.push({
        name: named?.getText(source) ?? "(anonymous)",
        line: lineOf(node.getStart(source)) + 1,
        lines: span(node),
      });
    }
    if (ts.isClassLike(node)) out.classes.push({ name: node.name?.getText(source) ?? "(anonymous)", lines: span(node) });
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out;
}

const files = readdirSync(path.join(ROOT, "src"), { withFileTypes: true, recursive: true })
  .filter((e) => e.isFile() && e.name.endsWith(".ts"))
  .map((e) => measure(path.join(e.parentPath, e.name)));

describe("sizes", () => {
  it(`no source file is over ${MAX_FILE} lines`, () => {
    expect(files.filter((f) => f.lines > MAX_FILE).map((f) => `${f.file}: ${f.lines}`)).toEqual([]);
  });

  it(`no function is over ${MAX_FUNCTION} lines`, () => {
    const long = files.flatMap((f) =>
      f.functions.filter((fn) => fn.lines > MAX_FUNCTION).map((fn) => `${f.file}:${fn.line} ${fn.name}: ${fn.lines}`),
    );
    expect(long).toEqual([]);
  });

  it(`no class of the pipeline (src/core/*.ts) is over ${MAX_CORE_CLASS} lines`, () => {
    const big = files
      .filter((f) => path.dirname(f.file) === path.join("src", "core"))
      .flatMap((f) => f.classes.filter((c) => c.lines > MAX_CORE_CLASS).map((c) => `${f.file} ${c.name}: ${c.lines}`));
    expect(big).toEqual([]);
  });

  it("measures what it claims (a known long file and function are seen)", () => {
    // The measure itself must not be blind: the largest file and function it finds are real ones.
    expect(Math.max(...files.map((f) => f.lines))).toBeGreaterThan(100);
    expect(Math.max(...files.flatMap((f) => f.functions.map((fn) => fn.lines)))).toBeGreaterThan(20);
  });
});
