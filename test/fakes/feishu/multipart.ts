/**
 * A small multipart/form-data reader for the fake's upload endpoints. It keeps every part as
 * bytes: the SDK sends a Buffer as a part without a filename, which WHATWG `formData()` would
 * decode as text and so corrupt.
 */

export interface Part {
  name: string;
  filename?: string;
  contentType?: string;
  data: Buffer;
}

/** The boundary of a multipart content type, or undefined for any other type. */
export function boundaryOf(contentType: string | undefined): string | undefined {
  if (!contentType?.toLowerCase().startsWith("multipart/form-data")) return undefined;
  const m = /boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType);
  return m?.[1] ?? m?.[2];
}

/** Splits a multipart body into its parts; undefined when it is malformed. */
export function parseMultipart(body: Buffer, boundary: string): Part[] | undefined {
  const delimiter = Buffer.from(`--${boundary}`);
  const parts: Part[] = [];
  let at = body.indexOf(delimiter);
  if (at < 0) return undefined;
  while (true) {
    at += delimiter.length;
    if (body.subarray(at, at + 2).toString() === "--") return parts;
    at += 2; // CRLF after the delimiter
    const headerEnd = body.indexOf("\r\n\r\n", at);
    if (headerEnd < 0) return undefined;
    const next = body.indexOf(Buffer.concat([Buffer.from("\r\n"), delimiter]), headerEnd);
    if (next < 0) return undefined;
    const part = readPart(body.subarray(at, headerEnd).toString("utf8"), body.subarray(headerEnd + 4, next));
    if (!part) return undefined;
    parts.push(part);
    at = next + 2;
  }
}

function readPart(headers: string, data: Buffer): Part | undefined {
  const disposition = /^content-disposition:(.*)$/im.exec(headers)?.[1] ?? "";
  const name = /\bname="([^"]*)"/i.exec(disposition)?.[1];
  if (name === undefined) return undefined;
  const part: Part = { name, data };
  const filename = /\bfilename="([^"]*)"/i.exec(disposition)?.[1];
  if (filename !== undefined) part.filename = filename;
  const type = /^content-type:\s*(.*)$/im.exec(headers)?.[1]?.trim();
  if (type) part.contentType = type;
  return part;
}
