/**
 * The built-in file tools. `read_file` reads a file of the current thread's folder: text as it
 * is, and the text of PDFs (through pdfjs-dist). `send_file` posts one of those files into the
 * chat after the reply text. Both see only the folder of the thread whose run called them, named
 * by the run's `thread_id`; a name that leaves the folder is simply not found.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import type { RunnableConfig } from "@langchain/core/runnables";
import { tool } from "langchain";
import { z } from "zod";
import type { FileOutbox, ThreadFiles } from "../files.js";

export const READ_FILE = "read_file";
export const SEND_FILE = "send_file";

/** Characters `read_file` returns at most per call; the rest is read with `offset`. */
const DEFAULT_MAX_CHARS = 20_000;

const ReadFileArgs = z.object({
  name: z.string().describe("The file's name, as listed in the message's uploaded files."),
  offset: z.number().int().min(0).optional().describe("Character to start at, to read on where a long file was cut."),
  max_chars: z.number().int().min(100).max(100_000).optional().describe("How many characters to return at most."),
});

const SendFileArgs = z.object({
  name: z.string().describe("The name of a file in this conversation's files, as listed in the uploaded files."),
});

export interface FileToolsOptions {
  files: ThreadFiles;
  outbox: FileOutbox;
  /** Largest file `send_file` accepts, in bytes. */
  maxSendBytes: number;
}

/** `read_file` and `send_file`, bound to the gateway's thread folders. */
export function fileTools(options: FileToolsOptions) {
  const { files, outbox, maxSendBytes } = options;
  const readFileTool = tool(
    async (args, config) => {
      const threadId = threadOf(config);
      const file = await files.find(threadId, args.name);
      if (!file) return notFound(args.name, await files.list(threadId));
      const text = await textOf(file.path);
      if (text === undefined) return `${file.name} is not a text or PDF file (${file.bytes} bytes); it cannot be read as text.`;
      const start = Math.min(args.offset ?? 0, text.length);
      const end = Math.min(text.length, start + (args.max_chars ?? DEFAULT_MAX_CHARS));
      const part = text.slice(start, end);
      return end < text.length ? `${part}\n\n[… ${text.length - end} more characters: read on with offset ${end}]` : part;
    },
    {
      name: READ_FILE,
      description:
        "Read a file the user sent in this conversation: plain text and the text of PDFs. Long files come back in parts; " +
        "read on with offset.",
      schema: ReadFileArgs,
    },
  );
  const sendFileTool = tool(
    async (args, config) => {
      const threadId = threadOf(config);
      const file = await files.find(threadId, args.name);
      if (!file) return notFound(args.name, await files.list(threadId));
      if (file.bytes > maxSendBytes)
        return `${file.name} has ${file.bytes} bytes, over the limit of ${maxSendBytes}; it was not sent.`;
      outbox.add(threadId, file);
      return `${file.name} will be sent to the user after your reply.`;
    },
    {
      name: SEND_FILE,
      description: "Send a file of this conversation's files to the user, as a download in the chat after your reply.",
      schema: SendFileArgs,
    },
  );
  return [readFileTool, sendFileTool];
}

function threadOf(config: RunnableConfig | undefined): string {
  const threadId = config?.configurable?.thread_id;
  if (typeof threadId !== "string" || !threadId) throw new Error("the file tools run only inside a thread");
  return threadId;
}

function notFound(name: string, present: { name: string }[]): string {
  const names = present.map((f) => f.name);
  return names.length > 0
    ? `There is no file named "${name}" in this conversation. Its files: ${names.join(", ")}.`
    : `There is no file named "${name}": the user has sent no files in this conversation.`;
}

/** The text of a text file or a PDF; undefined for other binary files. */
async function textOf(file: string): Promise<string | undefined> {
  const data = await readFile(file);
  if (path.extname(file).toLowerCase() === ".pdf" || data.subarray(0, 5).toString("latin1") === "%PDF-") return pdfText(data);
  // A NUL byte in the first 8 KB means binary; anything else is read as UTF-8.
  if (data.subarray(0, 8192).includes(0)) return undefined;
  return data.toString("utf8");
}

async function pdfText(data: Buffer): Promise<string> {
  const { getDocument } = await import("pdfjs-dist/legacy/build/pdf.mjs");
  const doc = await getDocument({ data: new Uint8Array(data), isEvalSupported: false, useSystemFonts: true, verbosity: 0 })
    .promise;
  try {
    const pages: string[] = [];
    for (let n = 1; n <= doc.numPages; n++) {
      const page = await doc.getPage(n);
      const content = await page.getTextContent();
      const line = content.items.map((item) => ("str" in item ? item.str : "")).join(" ");
      pages.push(line.replace(/\s+/g, " ").trim());
    }
    return pages.join("\n\n");
  } finally {
    await doc.destroy();
  }
}
