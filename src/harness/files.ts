/**
 * The files of each thread: what users sent (saved by the gateway when a message runs) and what
 * the agent may send back. One folder per thread under `storage.files`, with names made safe, and
 * every path checked to stay inside its folder. The built-in tools `read_file` and `send_file`
 * (tools/files.ts) reach only the folder of the thread whose run called them.
 */
import { mkdir, readdir, stat, writeFile } from "node:fs/promises";
import path from "node:path";

/** A file in a thread's folder. */
export interface ThreadFile {
  /** Its name in the folder (safe). */
  name: string;
  /** Absolute path. */
  path: string;
  bytes: number;
}

/** A size as notices write it: binary units with the everyday names (20 MiB is "20.0 MB"). */
export function sizeText(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/** Longest file name kept, in characters (extension included). */
const MAX_NAME = 120;

/** A name that is only a name: no folders, no control or reserved characters, never `.` or `..`. */
export function safeFileName(name: string): string {
  const base = name.split(/[\\/]/).pop() ?? "";
  let safe = base
    .normalize("NFC")
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this removes
    .replace(/[\u0000-\u001f\u007f<>:"|?*]/g, "_")
    .replace(/\s+/g, " ")
    .replace(/^[\s.]+|[\s.]+$/g, "");
  if (safe.length > MAX_NAME) {
    const ext = path.extname(safe).slice(0, 16);
    safe = `${safe.slice(0, MAX_NAME - ext.length)}${ext}`;
  }
  return safe || "file";
}

export class ThreadFiles {
  constructor(
    /** The folder that holds one folder per thread. */
    readonly root: string,
  ) {}

  /** The folder of `threadId`; thread ids are checked, so none can point elsewhere. */
  folder(threadId: string): string {
    if (!/^[\w.:-]{1,200}$/.test(threadId) || threadId.startsWith(".")) throw new Error(`not a thread id: ${threadId}`);
    return path.join(this.root, threadId.replace(/:/g, "_"));
  }

  /** Saves `data` as `name` (made safe) in the thread's folder; a name taken already gets ` (2)`, ` (3)`, … */
  async save(threadId: string, name: string, data: Uint8Array): Promise<ThreadFile> {
    const folder = this.folder(threadId);
    await mkdir(folder, { recursive: true });
    const safe = safeFileName(name);
    const ext = path.extname(safe);
    const stem = safe.slice(0, safe.length - ext.length);
    for (let n = 1; ; n++) {
      const candidate = n === 1 ? safe : `${stem} (${n})${ext}`;
      const file = path.join(folder, candidate);
      try {
        await writeFile(file, data, { flag: "wx" });
        return { name: candidate, path: file, bytes: data.byteLength };
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "EEXIST" || n > 999) throw err;
      }
    }
  }

  /** The file `name` of the thread, or undefined when there is none (or the name leaves the folder). */
  async find(threadId: string, name: string): Promise<ThreadFile | undefined> {
    const folder = this.folder(threadId);
    const file = path.resolve(folder, name);
    if (path.dirname(file) !== folder) return undefined;
    try {
      const info = await stat(file);
      return info.isFile() ? { name: path.basename(file), path: file, bytes: info.size } : undefined;
    } catch {
      return undefined;
    }
  }

  /** The thread's files, by name. */
  async list(threadId: string): Promise<ThreadFile[]> {
    const folder = this.folder(threadId);
    let names: string[];
    try {
      names = await readdir(folder);
    } catch {
      return [];
    }
    const files = await Promise.all(names.sort().map((name) => this.find(threadId, name)));
    return files.filter((f): f is ThreadFile => f !== undefined);
  }
}

/**
 * Files the agent asked to send (`send_file`, or a remote run's presented files), per thread,
 * until the gateway posts them after the run's reply text; and notices about files that could
 * not be put in it, posted with them.
 */
export class FileOutbox {
  private readonly waiting = new Map<string, ThreadFile[]>();
  private readonly notices = new Map<string, string[]>();

  add(threadId: string, file: ThreadFile): void {
    const list = this.waiting.get(threadId) ?? [];
    if (!list.some((f) => f.path === file.path)) list.push(file);
    this.waiting.set(threadId, list);
  }

  /** The files waiting for `threadId`, removed from the outbox. */
  take(threadId: string): ThreadFile[] {
    const list = this.waiting.get(threadId) ?? [];
    this.waiting.delete(threadId);
    return list;
  }

  /** Tells the user, after the reply, about a file that could not be sent (one sentence naming it). */
  notice(threadId: string, text: string): void {
    this.notices.set(threadId, [...(this.notices.get(threadId) ?? []), text]);
  }

  /** The notices waiting for `threadId`, removed from the outbox. */
  takeNotices(threadId: string): string[] {
    const list = this.notices.get(threadId) ?? [];
    this.notices.delete(threadId);
    return list;
  }
}

/**
 * The thread folders and file outbox a backend shares with the gateway, and the largest file it
 * may put there (`media.max_file_mb`): how a remote agent's presented files reach the chat.
 */
export interface AgentFiles {
  files: ThreadFiles;
  outbox: FileOutbox;
  maxBytes: number;
}
