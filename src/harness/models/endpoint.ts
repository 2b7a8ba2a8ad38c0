/** A model endpoint as messages show it: without a user name or password in its URL. */
export function withoutCredentials(url: string): string {
  try {
    const u = new URL(url);
    u.username = "";
    u.password = "";
    return u.toString();
  } catch {
    return url;
  }
}
