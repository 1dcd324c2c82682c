// Which addresses are internal: loopback, private, link-local, unspecified, unique-local and the like.
// An engine exposed beyond loopback refuses to fetch from them, so that no caller can use it to reach
// what only the engine's machine and network can reach (fetch-guard.ts).
import { BlockList, isIP } from 'node:net';

type Family = 'ipv4' | 'ipv6';

/** [network, prefix length, family, what it is]; the most specific first, so the reason is precise. */
const INTERNAL_NETWORKS: [string, number, Family, string][] = [
  ['0.0.0.0', 8, 'ipv4', 'unspecified ("this network")'],
  ['10.0.0.0', 8, 'ipv4', 'private'],
  ['100.64.0.0', 10, 'ipv4', 'shared (carrier-grade NAT)'],
  ['127.0.0.0', 8, 'ipv4', 'loopback'],
  ['169.254.0.0', 16, 'ipv4', 'link-local'],
  ['172.16.0.0', 12, 'ipv4', 'private'],
  ['192.0.0.0', 24, 'ipv4', 'IETF protocol'],
  ['192.168.0.0', 16, 'ipv4', 'private'],
  ['198.18.0.0', 15, 'ipv4', 'benchmarking'],
  ['224.0.0.0', 4, 'ipv4', 'multicast'],
  ['240.0.0.0', 4, 'ipv4', 'reserved'],
  ['::', 128, 'ipv6', 'unspecified'],
  ['::1', 128, 'ipv6', 'loopback'],
  ['::ffff:0:0', 96, 'ipv6', 'IPv4-mapped'],
  ['::', 96, 'ipv6', 'IPv4-compatible'],
  ['64:ff9b:1::', 48, 'ipv6', 'local NAT64'],
  ['100::', 64, 'ipv6', 'discard'],
  ['2001::', 32, 'ipv6', 'Teredo tunnel'],
  ['fc00::', 7, 'ipv6', 'unique-local'],
  ['fe80::', 10, 'ipv6', 'link-local'],
  ['fec0::', 10, 'ipv6', 'site-local'],
  ['ff00::', 8, 'ipv6', 'multicast'],
];

// A BlockList matches an IPv4 rule against IPv4-mapped IPv6 addresses and back: each address is
// checked against the rules of its own family only, so that 8.8.8.8 is not "::ffff:8.8.8.8".
const CLASSES = INTERNAL_NETWORKS.map(([network, prefix, family, kind]) => {
  const list = new BlockList();
  list.addSubnet(network, prefix, family);
  return { list, family, kind };
});

/** What kind of internal address this is ('loopback', 'private', ...), or undefined for a public one. */
export function internalAddressKind(address: string): string | undefined {
  const bare = address.replace(/%.*$/, ''); // an IPv6 zone (fe80::1%eth0) names an interface, not an address
  const family = familyOf(bare);
  if (!family) return 'unparsable';
  for (const c of CLASSES) if (c.family === family && c.list.check(bare, family)) return c.kind;
  if (family === 'ipv6') {
    // NAT64 (64:ff9b::/96) and 6to4 (2002::/16) carry an IPv4 address: judged by that one.
    const groups = ipv6Groups(bare);
    const embedded =
      groups[0] === 0x64 && groups[1] === 0xff9b && groups.slice(2, 6).every((g) => g === 0)
        ? [groups[6], groups[7]]
        : groups[0] === 0x2002
          ? [groups[1], groups[2]]
          : undefined;
    if (embedded) {
      const kind = internalAddressKind(
        `${embedded[0] >> 8}.${embedded[0] & 0xff}.${embedded[1] >> 8}.${embedded[1] & 0xff}`,
      );
      return kind && `${kind} (inside ${bare})`;
    }
  }
  return undefined;
}

/** A set of addresses and CIDR ranges (`10.0.0.5`, `192.168.1.0/24`, `fd00::/8`); an error names the entry that is neither. */
export function parseNetworks(entries: readonly string[], name: string): BlockList {
  const list = new BlockList();
  for (const entry of entries) {
    const match = typeof entry === 'string' ? /^([^/]+)(?:\/(\d{1,3}))?$/.exec(entry.trim()) : null;
    const address = match?.[1].replace(/^\[|\]$/g, '') ?? '';
    const family = familyOf(address);
    const prefix = match?.[2] === undefined ? undefined : Number(match[2]);
    if (!family || (prefix !== undefined && prefix > (family === 'ipv4' ? 32 : 128))) {
      throw new TypeError(
        `${name}: each entry must be an IP address or a CIDR range such as 192.168.1.0/24 (got ${JSON.stringify(entry)})`,
      );
    }
    if (prefix === undefined) list.addAddress(address, family);
    else list.addSubnet(address, prefix, family);
  }
  return list;
}

export function familyOf(address: string): Family | undefined {
  const version = isIP(address);
  return version === 4 ? 'ipv4' : version === 6 ? 'ipv6' : undefined;
}

/** The eight 16-bit groups of an IPv6 address (`::` expanded, a trailing dotted quad folded in). */
function ipv6Groups(address: string): number[] {
  let text = address.toLowerCase();
  const quad = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (quad) {
    const [a, b, c, d] = quad.slice(1).map(Number);
    text = `${text.slice(0, quad.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::');
  const front = head ? head.split(':') : [];
  const back = tail ? tail.split(':') : [];
  const groups =
    tail === undefined ? front : [...front, ...Array<string>(8 - front.length - back.length).fill('0'), ...back];
  return groups.map((g) => parseInt(g, 16));
}
