/**
 * Paths whose segment after the match is a secret: API token secrets (the instance's and a project's), invite link
 * secrets (their sign-up and validation pages, and the Admin's routes of a link).
 */
const SECRET_PATH_SEGMENT = /(\/api\/admin\/(?:projects\/[^/?#]+\/)?api-tokens\/|\/invite\/|\/api\/admin\/invite-link\/tokens\/)[^/?#]+/g;

/**
 * Query parameters that carry a credential: reset tokens, one-time authorization codes, stream channels (an SDK
 * token's hash, which opens its stream), and any parameter named for a secret.
 */
const SECRET_QUERY_PARAMETER = /([?&](?:token|secret|code|channel|password|api[_-]?key)=)[^&#]*/gi;

/** A URL as logs show it: every secret it carries, in its path or its query, masked. */
export function redactUrl(url: string): string {
  return url.replace(SECRET_PATH_SEGMENT, '$1[redacted]').replace(SECRET_QUERY_PARAMETER, '$1[redacted]');
}
