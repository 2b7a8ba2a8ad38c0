import path from "node:path";
import { fileURLToPath } from "node:url";
import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { ChatOpenAI } from "@langchain/openai";
import { describe, expect, it } from "vitest";
import { ReflectionError } from "../src/errors.js";
import { resolveClass, resolveVariable } from "../src/reflection/index.js";

const here = path.dirname(fileURLToPath(import.meta.url));
const fixtures = path.join(here, "fixtures/reflection");
const opts = { baseDir: fixtures };

async function failure(p: Promise<unknown>): Promise<ReflectionError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ReflectionError);
  return err as ReflectionError;
}

describe("resolveVariable", () => {
  it("resolves a package export", async () => {
    expect(await resolveVariable("@langchain/openai:ChatOpenAI")).toBe(ChatOpenAI);
  });

  it("resolves a relative path against the base folder, not the process cwd", async () => {
    const { Child } = await import("./fixtures/reflection/things.mjs");
    expect(await resolveVariable("./things.mjs:Child", null, opts)).toBe(Child);
    const other = await failure(resolveVariable("./things.mjs:Child", null, { baseDir: here }));
    expect(other.code).toBe("reflection_module_not_found");
  });

  it("follows dotted export paths", async () => {
    const { Child } = await import("./fixtures/reflection/things.mjs");
    expect(await resolveVariable("./things.mjs:nested.inner.Deep", null, opts)).toBe(Child);
  });

  it("shows the expected form when the colon is missing", async () => {
    const err = await failure(resolveVariable("@langchain/openai.ChatOpenAI"));
    expect(err.message).toContain('"module:Export"');
    expect(err.message).toContain("@langchain/openai.ChatOpenAI");
  });

  it("ends with the npm install command for a missing package", async () => {
    const err = await failure(resolveVariable("antler-not-installed-pkg/sub:Thing"));
    expect(err.code).toBe("reflection_package_missing");
    expect(err.message).toMatch(/npm install antler-not-installed-pkg$/);
  });

  it("keeps the scope in a missing scoped package name", async () => {
    const err = await failure(resolveVariable("@antler-none/pkg:Thing"));
    expect(err.message).toMatch(/npm install @antler-none\/pkg$/);
  });

  it("names the missing dependency and the module that needed it", async () => {
    const err = await failure(resolveVariable("./needs-missing-dep.mjs:value", null, opts));
    expect(err.code).toBe("reflection_dependency_missing");
    expect(err.message).toContain("needs package antler-no-such-dependency");
    expect(err.message).toContain("needs-missing-dep.mjs");
    expect(err.message).toMatch(/npm install antler-no-such-dependency$/);
  });

  it("keeps the original text of an error thrown while importing, with no install hint", async () => {
    const err = await failure(resolveVariable("./throws.mjs:anything", null, opts));
    expect(err.message).toContain("fixture exploded while loading");
    expect(err.message).not.toContain("npm install");
  });

  it("lists the module's exports when the export is missing", async () => {
    const err = await failure(resolveVariable("./things.mjs:Nope", null, opts));
    expect(err.code).toBe("reflection_export_missing");
    expect(err.message).toContain("Base, Child, Unrelated, helper, instance, nested, plain");
  });

  it("checks instanceof when a type is expected", async () => {
    const { Base } = await import("./fixtures/reflection/things.mjs");
    expect(await resolveVariable("./things.mjs:instance", Base, opts)).toBeInstanceOf(Base);
    const err = await failure(resolveVariable("./things.mjs:plain", Base, opts));
    expect(err.code).toBe("reflection_wrong_type");
    expect(err.message).toContain("not an instance of Base");
  });
});

describe("resolveClass", () => {
  it("accepts a subclass of the base class", async () => {
    expect(await resolveClass("@langchain/openai:ChatOpenAI", BaseChatModel)).toBe(ChatOpenAI);
  });

  it("rejects a value that is not a class", async () => {
    const plain = await failure(resolveClass("./things.mjs:plain", null, opts));
    expect(plain.code).toBe("reflection_not_class");
    const arrow = await failure(resolveClass("./things.mjs:instance", null, opts));
    expect(arrow.code).toBe("reflection_not_class");
  });

  it("rejects a class that is not a subclass", async () => {
    const { Base } = await import("./fixtures/reflection/things.mjs");
    const err = await failure(resolveClass("./things.mjs:Unrelated", Base, opts));
    expect(err.code).toBe("reflection_not_subclass");
    expect(err.message).toContain("not a subclass of Base");
  });

  it("accepts any class when the base is null", async () => {
    const { Unrelated } = await import("./fixtures/reflection/things.mjs");
    expect(await resolveClass("./things.mjs:Unrelated", null, opts)).toBe(Unrelated);
  });
});
