/** The web chat's emitter: lists as real, nested HTML lists; the rest escaped as before. */
import { describe, expect, it } from "vitest";
import { toHtml } from "../../src/channels/web/format.js";

describe("web chat HTML", () => {
  it("writes numbered, nested and task lists as <ol>/<ul>, keeping a list's own start", () => {
    const md = "Steps:\n\n3. three\n4. four\n   - a <b>\n   - b\n\n- [x] done\n- [ ] todo";
    expect(toHtml(md)).toBe(
      'Steps:\n\n<ol start="3"><li>three</li><li>four<ul><li>a &lt;b&gt;</li><li>b</li></ul></li></ol>\n\n<ul><li>☑ done</li><li>☐ todo</li></ul>',
    );
  });

  it("keeps code blocks inside list items as blocks", () => {
    expect(toHtml("1. run:\n\n   ```\n   npm start\n   ```")).toBe("<ol><li>run:<pre><code>npm start</code></pre></li></ol>");
  });
});
