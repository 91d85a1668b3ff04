import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * Integrations call URLs their configurations name, from inside the network Vexil runs in. Unless the operator
 * allows private networks, only public unicast addresses may be called: never loopback, private (RFC 1918,
 * IPv6 unique local, which includes AWS's fd00:ec2::254), link-local (cloud metadata at 169.254.169.254),
 * carrier-grade NAT (Alibaba's metadata 100.100.100.200), multicast, broadcast, unspecified or reserved
 * ranges, nor IPv6 forms that embed an IPv4 address (IPv4-mapped, 6to4, NAT64, Teredo).
 */
export class BlockedAddressError extends Error {
  override readonly name = 'BlockedAddressError';
  readonly code = 'EVEXILBLOCKED';

  constructor(
    readonly host: string,
    readonly address: string,
    readonly range: string,
  ) {
    super(
      `${host === address ? address : `${host} resolves to ${address}`}, a ${range} address; ` +
        'integrations may call only public addresses unless INTEGRATIONS_ALLOW_PRIVATE_NETWORKS=true',
    );
  }
}

/** The ipaddr.js range of a non-public address, or undefined for a public unicast one. */
const IETF_RESERVED_V6 = ipaddr.parseCIDR('::/8');

export function nonPublicRange(address: string): string | undefined {
  if (!ipaddr.isValid(address)) return 'invalid';
  // IPv4-mapped IPv6 (::ffff:127.0.0.1) is classified as the IPv4 address it carries.
  const parsed = ipaddr.process(address);
  const range = parsed.range();
  if (range !== 'unicast') return range;
  // ipaddr.js calls the deprecated IPv4-compatible form (`[::127.0.0.1]`, parsed as ::7f00:1) unicast; the
  // whole of ::/8 is reserved and some stacks still route it to the IPv4 address it carries.
  if (parsed.kind() === 'ipv6' && parsed.match(IETF_RESERVED_V6)) return 'reserved';
  return undefined;
}

/**
 * The host as a resolver sees it: `[::1]` in a URL is the address `::1`, and a fully qualified name's trailing
 * dot (`localhost.`) names the same host as without it.
 */
function bareHost(hostname: string): string {
  if (hostname.startsWith('[') && hostname.endsWith(']')) return hostname.slice(1, -1);
  return hostname.toLowerCase().replace(/\.+$/, '');
}

/** `localhost` and its subdomains are loopback by definition (RFC 6761), whatever a resolver answers. */
function isLocalhostName(host: string): boolean {
  return host === 'localhost' || host.endsWith('.localhost');
}

/** Throws BlockedAddressError when the URL's host is an IP literal or a localhost name that may not be called. */
export function assertPublicLiteral(url: URL): void {
  const host = bareHost(url.hostname);
  if (isLocalhostName(host)) throw new BlockedAddressError(host, '127.0.0.1', 'loopback');
  if (isIP(host) === 0) return;
  const range = nonPublicRange(host);
  if (range !== undefined) throw new BlockedAddressError(host, host, range);
}

function resolveAll(hostname: string): Promise<LookupAddress[]> {
  return new Promise((resolve, reject) => {
    dnsLookup(hostname, { all: true, verbatim: true }, (error, addresses) => (error ? reject(error) : resolve(addresses)));
  });
}

/**
 * The configuration-time check: the host (a literal, or every address its name resolves to now) must be
 * public. A name that does not resolve passes: it may resolve later, and the send-time check still applies.
 */
export async function assertPublicUrl(url: URL): Promise<void> {
  assertPublicLiteral(url);
  const host = bareHost(url.hostname);
  if (isIP(host) !== 0) return;
  let addresses: LookupAddress[];
  try {
    addresses = await resolveAll(host);
  } catch {
    return;
  }
  for (const { address } of addresses) {
    const range = nonPublicRange(address);
    if (range !== undefined) throw new BlockedAddressError(host, address, range);
  }
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for the sockets integrations open: it resolves the name, refuses it if any address is not public,
 * and hands the checked addresses to the socket. The address connected to is the address checked, so a DNS
 * answer that changes between a check and the connection (DNS rebinding) cannot reach a private address.
 */
export function publicOnlyLookup(hostname: string, options: LookupOptions, callback: LookupCallback): void {
  const host = bareHost(hostname);
  if (isLocalhostName(host)) {
    callback(new BlockedAddressError(hostname, '127.0.0.1', 'loopback'), '');
    return;
  }
  resolveAll(host).then(
    (addresses) => {
      for (const { address } of addresses) {
        const range = nonPublicRange(address);
        if (range !== undefined) return callback(new BlockedAddressError(hostname, address, range), '');
      }
      const wanted = options.family === 4 || options.family === 6 ? addresses.filter((a) => a.family === options.family) : addresses;
      if (wanted.length === 0) {
        return callback(Object.assign(new Error(`${hostname} has no IPv${options.family} address`), { code: 'ENOTFOUND' }), '');
      }
      if (options.all) return callback(null, wanted);
      return callback(null, wanted[0]!.address, wanted[0]!.family);
    },
    (error: NodeJS.ErrnoException) => callback(error, ''),
  );
}
