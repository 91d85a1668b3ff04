/** `https://app.example.com` as an origin (scheme, host, port; no path), or nothing when it is not one. */
export function parseOrigin(value: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch {
    return undefined;
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return undefined;
  return parsed.origin === value.replace(/\/+$/, '') ? parsed.origin : undefined;
}
