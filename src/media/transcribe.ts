/**
 * Voice notes to text, through any OpenAI-compatible `/audio/transcriptions` endpoint
 * (`media.transcription`). The key is sent as a bearer token and never logged.
 */
import type { MediaConfig } from "../config/schema.js";

export type TranscriptionSettings = MediaConfig["transcription"];

export class TranscriptionError extends Error {
  override readonly name = "TranscriptionError";
}

/**
 * The transcript of `data`; throws `TranscriptionError` with a short reason when the endpoint
 * fails. `settings.timeout_ms` bounds the whole exchange, the answer's body included; `stop` (the
 * conversation's `/stop`) ends it early and rejects with its reason.
 */
export async function transcribe(
  settings: TranscriptionSettings,
  file: { name: string; mime: string; data: Uint8Array },
  stop?: AbortSignal,
): Promise<string> {
  if (!settings.base_url) throw new TranscriptionError("no transcription endpoint is configured (media.transcription.base_url)");
  const form = new FormData();
  form.set("file", new Blob([file.data], { type: file.mime }), file.name);
  form.set("model", settings.model);
  form.set("response_format", "json");
  const limit = AbortSignal.timeout(settings.timeout_ms);
  const signal = stop ? AbortSignal.any([limit, stop]) : limit;
  const failed = (err: unknown): Error => {
    if (stop?.aborted) return stop.reason as Error;
    const reason = limit.aborted ? `no answer in ${settings.timeout_ms} ms` : (err as Error).message;
    return new TranscriptionError(`the transcription endpoint could not be reached: ${reason}`);
  };
  let res: Response;
  let body: string;
  try {
    res = await fetch(`${settings.base_url.replace(/\/+$/, "")}/audio/transcriptions`, {
      method: "POST",
      body: form,
      headers: settings.api_key ? { authorization: `Bearer ${settings.api_key}` } : {},
      signal,
    });
    body = await res.text();
  } catch (err) {
    throw failed(err);
  }
  if (!res.ok) {
    const detail = body.slice(0, 200);
    throw new TranscriptionError(`the transcription endpoint answered HTTP ${res.status}${detail ? `: ${detail}` : ""}`);
  }
  const text = parsed(body)?.text;
  if (typeof text !== "string") throw new TranscriptionError("the transcription endpoint sent no text");
  return text.trim();
}

function parsed(body: string): { text?: unknown } | undefined {
  try {
    return JSON.parse(body) as { text?: unknown };
  } catch {
    return undefined;
  }
}
