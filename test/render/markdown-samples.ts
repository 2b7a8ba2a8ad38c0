/** Markdown texts for chunking tests: realistic replies with fences, and seeded random ones. */

/** A small deterministic PRNG, so a failing random case can be replayed from its seed. */
export function prng(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 0x1_0000_0000;
  };
}

const WORDS = ["alpha", "beta", "gamma", "delta", "the", "agent", "replies", "with", "**bold**", "`code`", "_it_", "a", "x"];

function sentence(rand: () => number): string {
  const n = 3 + Math.floor(rand() * 14);
  const words = Array.from({ length: n }, () => WORDS[Math.floor(rand() * WORDS.length)]!);
  return `${words.join(" ")}${[".", "!", "?", ":"][Math.floor(rand() * 4)]}`;
}

function codeBlock(rand: () => number, lines: number): string {
  const info = ["ts", "python", "", 'js title="x"'][Math.floor(rand() * 4)];
  const fence = rand() < 0.2 ? "~~~" : rand() < 0.2 ? "````" : "```";
  const indent = rand() < 0.15 ? "  " : "";
  const body = Array.from(
    { length: lines },
    (_, i) => `${indent}  const v${i} = compute(${i}) // ${"#".repeat(Math.floor(rand() * 30))}`,
  );
  if (rand() < 0.1) body.push(`${indent}${"y".repeat(200 + Math.floor(rand() * 400))}`);
  if (rand() < 0.2) body.push("");
  return `${indent}${fence}${info}\n${body.join("\n")}\n${indent}${fence}`;
}

/** A reply-like text of about `size` characters: paragraphs, lists, code fences, CJK. */
export function sampleReply(size: number, seed = 1): string {
  const rand = prng(seed);
  const parts: string[] = [];
  let length = 0;
  while (length < size) {
    const r = rand();
    let part: string;
    if (r < 0.25) part = codeBlock(rand, 5 + Math.floor(rand() * 80));
    else if (r < 0.4) part = Array.from({ length: 2 + Math.floor(rand() * 6) }, () => `- ${sentence(rand)}`).join("\n");
    else if (r < 0.45) part = "这是一个很长的中文句子。它没有空格，但是有句号！".repeat(1 + Math.floor(rand() * 30));
    else if (r < 0.5) part = `## ${sentence(rand)}`;
    else part = Array.from({ length: 1 + Math.floor(rand() * 8) }, () => sentence(rand)).join(" ");
    parts.push(part);
    length += part.length + 2;
  }
  return parts.join(rand() < 0.5 ? "\n\n" : "\n\n\n");
}

/** Short texts made of markup fragments in random order, for splitting at tiny limits. */
export function fragmentSoup(seed: number, pieces: number): string {
  const rand = prng(seed);
  const bits = ["```", "~~~", "```ts", "\n", "\n\n", " ", "word", "x.", "`", "**", "  ", "  ```", "````", "。", "é", "😀", "\t"];
  return Array.from({ length: pieces }, () => bits[Math.floor(rand() * bits.length)]!).join("");
}
