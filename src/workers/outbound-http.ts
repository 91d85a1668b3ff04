import type { Agent, request as undiciRequest } from 'undici';
import type { IntegrationsConfig } from '../config.js';
import { assertPublicLiteral, BlockedAddressError, publicOnlyLookup } from '../domain/addons/outbound-safety.js';

/**
 * The one way integrations reach the outside world. undici (the HTTP client inside Node's fetch) is used
 * directly because its Agent lets us give sockets our own `lookup`: the address connected to is the address
 * checked, which Node's built-in fetch cannot be told. Redirects are not followed (a redirect could lead to a
 * private address), so a 3xx answer is a failed attempt.
 */
export type SendOutcome =
  | { kind: 'answered'; statusCode: number }
  | { kind: 'timeout' }
  | { kind: 'blocked'; message: string }
  | { kind: 'network-error'; message: string };

export interface OutboundPost {
  url: string;
  headers: Record<string, string>;
  body: string;
}

export interface OutboundHttp {
  /** Never throws: every way a request can end is an outcome. `deadline` bounds connection and answer. */
  post(target: OutboundPost, deadline: AbortSignal): Promise<SendOutcome>;
  close(): Promise<void>;
}

const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

function causes(error: unknown): unknown[] {
  const chain: unknown[] = [];
  for (
    let current = error;
    current !== undefined && current !== null && chain.length < 10;
    current = (current as { cause?: unknown }).cause
  ) {
    chain.push(current);
  }
  return chain;
}

/** A short description of a network failure: its code and message, never the URL (it may carry a secret). */
function describeFailure(error: unknown): string {
  const deepest = causes(error)
    .filter((cause): cause is Error & { code?: string } => cause instanceof Error)
    .at(-1);
  if (!deepest) return String(error).slice(0, 200);
  const text = deepest.code && !deepest.message.includes(deepest.code) ? `${deepest.code}: ${deepest.message}` : deepest.message;
  return text.slice(0, 200);
}

export function createOutboundHttp(options: Pick<IntegrationsConfig, 'allowPrivateNetworks' | 'deliveryTimeoutMs'>): OutboundHttp {
  // The HTTP client is loaded with the first delivery: an instance may never send one, and loading it was a
  // tenth of start-up.
  let client: Promise<{ agent: Agent; request: typeof undiciRequest }> | undefined;
  const connect = () =>
    (client ??= import('undici').then(({ Agent: UndiciAgent, request }) => ({
      agent: new UndiciAgent({
        connect: { timeout: options.deliveryTimeoutMs, ...(options.allowPrivateNetworks ? {} : { lookup: publicOnlyLookup }) },
        headersTimeout: options.deliveryTimeoutMs,
        bodyTimeout: options.deliveryTimeoutMs,
      }),
      request,
    })));

  return {
    async post(target, deadline) {
      try {
        const { agent, request } = await connect();
        const url = new URL(target.url);
        // Sockets skip `lookup` for IP literals, so those are checked here.
        if (!options.allowPrivateNetworks) assertPublicLiteral(url);
        const response = await request(url, {
          method: 'POST',
          headers: target.headers,
          body: target.body,
          dispatcher: agent,
          signal: deadline,
          maxRedirections: 0,
        });
        // The answer's body is not kept; reading it frees the connection for the next delivery. The status is
        // the answer: a body cut short by the deadline does not change it.
        await response.body.dump().catch(() => undefined);
        return { kind: 'answered', statusCode: response.statusCode };
      } catch (error) {
        const chain = causes(error);
        const blocked = chain.find((cause): cause is BlockedAddressError => cause instanceof BlockedAddressError);
        if (blocked) return { kind: 'blocked', message: blocked.message };
        if (deadline.aborted || chain.some((cause) => TIMEOUT_CODES.has((cause as { code?: string }).code ?? ''))) {
          return { kind: 'timeout' };
        }
        return { kind: 'network-error', message: describeFailure(error) };
      }
    },
    close: async () => {
      if (client) await (await client).agent.close();
    },
  };
}
