/**
 * A project's IP allow list (`settings.allowed_ips`), read as Neon's proxy reads it
 * (proxy/src/auth/credentials.rs): each entry a subnet (`10.0.0.0/8`), a range
 * (`10.0.0.1-10.0.0.9`) or one address, IPv4 or IPv6, compared within its family only (an IPv6
 * entry never admits an IPv4 client, `::ffff:10.0.0.1` included); an empty list allows every
 * address. Pure.
 */
import net from "node:net";
import { plainAddress } from "../../platform/peer.js";

type Family = "ipv4" | "ipv6";

/** An address's family; none for a scoped IPv6 address (`fe80::1%eth0`), which the proxy's parser refuses. */
const family = (address: string): Family | undefined =>
  net.isIPv4(address) ? "ipv4" : net.isIPv6(address) && !address.includes("%") ? "ipv6" : undefined;

/** What is wrong with an allow-list entry, or undefined when it reads as one of the three forms. */
export function ipPatternProblem(pattern: string): string | undefined {
  const slash = pattern.indexOf("/");
  if (slash >= 0) {
    const base = pattern.slice(0, slash);
    const prefix = pattern.slice(slash + 1);
    const kind = family(base);
    const bits = kind === "ipv4" ? 32 : 128;
    if (!kind || !/^\d{1,3}$/.test(prefix) || Number(prefix) > bits)
      return `"${pattern}" is not a subnet: an address, a slash and a prefix length (at most 32 for IPv4, 128 for IPv6)`;
    return undefined;
  }
  const dash = pattern.indexOf("-");
  if (dash >= 0) {
    const start = pattern.slice(0, dash);
    const end = pattern.slice(dash + 1);
    const kind = family(start);
    if (!kind || family(end) !== kind)
      return `"${pattern}" is not a range: two addresses of the same family joined by "-"`;
    const probe = new net.BlockList();
    try {
      probe.addRange(start, end, kind);
    } catch {
      return `"${pattern}" is not a range: its first address is above its last`;
    }
    return undefined;
  }
  return family(pattern) ? undefined : `"${pattern}" is not an IP address, an address range or a subnet`;
}

/** A list's rules, one node BlockList per family (one BlockList matches IPv4 clients against IPv4-mapped IPv6 rules, which the proxy does not). */
export type AllowList = Record<Family, net.BlockList>;

/**
 * The addresses a list allows. An entry that does not read (stored before entries were checked)
 * allows nothing, as the proxy's `IpPattern::None`.
 */
export function allowList(patterns: readonly string[]): AllowList {
  const list: AllowList = { ipv4: new net.BlockList(), ipv6: new net.BlockList() };
  for (const pattern of patterns) {
    if (ipPatternProblem(pattern)) continue;
    const slash = pattern.indexOf("/");
    const dash = pattern.indexOf("-");
    const first = pattern.slice(0, slash >= 0 ? slash : dash >= 0 ? dash : undefined);
    const kind = family(first) as Family;
    if (slash >= 0) list[kind].addSubnet(first, Number(pattern.slice(slash + 1)), kind);
    else if (dash >= 0) list[kind].addRange(first, pattern.slice(dash + 1), kind);
    else list[kind].addAddress(first, kind);
  }
  return list;
}

/**
 * Whether a list allows a client's address (an empty list, null, allows all). A client a
 * dual-stack socket shows as IPv4-mapped IPv6 is an IPv4 client.
 */
export function allows(list: AllowList | null, peer: string): boolean {
  if (!list) return true;
  const address = plainAddress(peer);
  const kind = family(address);
  return kind !== undefined && list[kind].check(address, kind);
}
