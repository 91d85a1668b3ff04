import ipaddr from 'ipaddr.js';

type Range = [ipaddr.IPv4 | ipaddr.IPv6, number];

/** An address or a CIDR range (`10.0.0.0/8`, `2001:db8::/32`, `192.168.1.7`); undefined when it is neither. */
export function parseAddressRange(entry: string): Range | undefined {
  try {
    if (entry.includes('/')) return ipaddr.parseCIDR(entry);
    const address = ipaddr.parse(entry);
    return [address, address.kind() === 'ipv4' ? 32 : 128];
  } catch {
    return undefined;
  }
}

/** A list of addresses and ranges that an address is looked up in (IPv4 written as IPv6, `::ffff:10.0.0.1`, included). */
export class AddressRanges {
  private readonly ranges: Range[];

  constructor(entries: string[]) {
    this.ranges = entries.map((entry) => {
      const range = parseAddressRange(entry);
      if (!range) throw new Error(`${JSON.stringify(entry)} is not an address or a CIDR range`);
      return range;
    });
  }

  includes(address: string): boolean {
    let parsed: ipaddr.IPv4 | ipaddr.IPv6;
    try {
      parsed = ipaddr.process(address);
    } catch {
      return false;
    }
    return this.ranges.some(([range, bits]) => range.kind() === parsed.kind() && parsed.match(range, bits));
  }
}
