/**
 * A browser's cookie jar for one origin: takes `Set-Cookie` headers (with `Path`, `Max-Age` and
 * `Expires`), sends matching cookies back in a `Cookie` header, and keeps each cookie's attributes
 * so a test can check `HttpOnly` and `SameSite`.
 */

export interface StoredCookie {
  name: string;
  value: string;
  path: string;
  /** Epoch ms, or undefined for a session cookie. */
  expires?: number;
  httpOnly: boolean;
  /** `Strict`, `Lax`, `None`, or undefined when not set. */
  sameSite?: string;
  /** The `Set-Cookie` line as the server wrote it. */
  raw: string;
}

export class CookieJar {
  private readonly cookies = new Map<string, StoredCookie>();

  /** Stores the cookies a response sets; returns the names it set (or removed). */
  take(response: Response): string[] {
    const names: string[] = [];
    for (const line of response.headers.getSetCookie()) {
      const cookie = parseSetCookie(line);
      if (!cookie) continue;
      names.push(cookie.name);
      if (cookie.expires !== undefined && cookie.expires <= Date.now()) this.cookies.delete(cookie.name);
      else this.cookies.set(cookie.name, cookie);
    }
    return names;
  }

  /** The `Cookie` header for a request to `pathname`, or undefined when no cookie applies. */
  header(pathname: string): string | undefined {
    const now = Date.now();
    const sent = [...this.cookies.values()]
      .filter((c) => (c.expires === undefined || c.expires > now) && pathMatches(c.path, pathname))
      .map((c) => `${c.name}=${c.value}`);
    return sent.length > 0 ? sent.join("; ") : undefined;
  }

  get(name: string): StoredCookie | undefined {
    return this.cookies.get(name);
  }

  all(): StoredCookie[] {
    return [...this.cookies.values()];
  }

  set(cookie: Pick<StoredCookie, "name" | "value"> & Partial<StoredCookie>): void {
    this.cookies.set(cookie.name, { path: "/", httpOnly: false, raw: "", ...cookie });
  }

  delete(name: string): void {
    this.cookies.delete(name);
  }
}

function parseSetCookie(line: string): StoredCookie | undefined {
  const [pair = "", ...attributes] = line.split(";");
  const eq = pair.indexOf("=");
  if (eq <= 0) return undefined;
  const cookie: StoredCookie = {
    name: pair.slice(0, eq).trim(),
    value: pair.slice(eq + 1).trim(),
    path: "/",
    httpOnly: false,
    raw: line,
  };
  let maxAge: number | undefined;
  for (const attribute of attributes) {
    const [key = "", ...rest] = attribute.split("=");
    const value = rest.join("=").trim();
    switch (key.trim().toLowerCase()) {
      case "path":
        if (value.startsWith("/")) cookie.path = value;
        break;
      case "max-age":
        if (/^-?\d+$/.test(value)) maxAge = Number(value);
        break;
      case "expires": {
        const at = Date.parse(value);
        if (!Number.isNaN(at)) cookie.expires = at;
        break;
      }
      case "httponly":
        cookie.httpOnly = true;
        break;
      case "samesite":
        cookie.sameSite = value;
        break;
    }
  }
  // Max-Age wins over Expires (RFC 6265 §5.3).
  if (maxAge !== undefined) cookie.expires = Date.now() + maxAge * 1000;
  return cookie;
}

/** RFC 6265 §5.1.4: `/chat` matches `/chat`, `/chat/` and `/chat/api/…`, not `/chatter`. */
function pathMatches(cookiePath: string, requestPath: string): boolean {
  if (requestPath === cookiePath) return true;
  if (!requestPath.startsWith(cookiePath)) return false;
  return cookiePath.endsWith("/") || requestPath[cookiePath.length] === "/";
}
