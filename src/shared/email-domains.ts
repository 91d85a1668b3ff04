const DOMAIN = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/;

/** Email domains a policy may hold at most. */
export const MAX_EMAIL_DOMAINS = 100;

/**
 * Email domains as Unleash writes them, one comma-separated string, in lower case and without repeats; `wrong`
 * is the first entry that is not a domain name.
 */
export function readEmailDomains(text: string): { domains: string[]; wrong?: string } {
  const domains = [
    ...new Set(
      text
        .split(',')
        .map((domain) => domain.trim().toLowerCase())
        .filter(Boolean),
    ),
  ];
  const wrong = domains.find((domain) => !DOMAIN.test(domain));
  return wrong === undefined ? { domains } : { domains, wrong };
}
