/**
 * Voice notes to text, through any OpenAI-compatible `/audio/transcriptions` endpoint
 * (`media.transcription`). The key is sent as a bearer token and never logged.
 */
import type { MediaConfig } from "../config/schema.js";

export type TranscriptionSettings = MediaConfig["transcription"];

export class TranscriptionError extends Error {
  override readonly name = "TranscriptionError";
}

/** The transcript of `data`; throws `TranscriptionError` with a short reason when the endpoint fails. */
export async function transcribe(
  settings: TranscriptionSettings,
  file: { name: string; mime: string; data: Uint8Array },
): Promise<string> {
  if (!settings.base_url) throw new TranscriptionError("no transcription endpoint is configured (media.transcription.base_url)");
  const form = new FormData();
  form.set("file", new Blob([file.data], { type: file.mime }), file.name);
  form.set("model", settings.model);
  form.set("response_format", "json");
  let res: Response;
  try {
    res = await fetch(`${settings.base_url.replace(/\/+$/, "")}/audio/transcriptions`, {
      method: "POST",
      body: form,
      headers: settings.api_key ? { authorization: `Bearer ${settings.api_key}` } : {},
      signal: AbortSignal.timeout(settings.timeout_ms),
    });
  } catch (err) {
    const reason = (err as Error).name === "TimeoutError" ? `no answer in ${settings.timeout_ms} ms` : (err as Error).message;
    throw new TranscriptionError(`the transcription endpoint could not be reached: ${reason}`);
  }
  if (!res.ok) {
    const detail = (await res.text().catch(() => "")).slice(0, 200);
    throw new TranscriptionError(`the transcription endpoint answered HTTP ${res.status}${detail ? `: ${detail}` : ""}`);
  }
  const body = (await res.json().catch(() => undefined)) as { text?: unknown } | undefined;
  if (typeof body?.text !== "string") throw new TranscriptionError("the transcription endpoint sent no text");
  return body.text.trim();
}
