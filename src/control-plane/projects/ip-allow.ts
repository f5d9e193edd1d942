/**
 * A project's IP allow list (`settings.allowed_ips`), read as Neon's proxy reads it
 * (proxy/src/auth/credentials.rs): each entry a subnet (`10.0.0.0/8`), a range
 * (`10.0.0.1-10.0.0.9`) or one address, IPv4 or IPv6; an empty list allows every address. Pure.
 */
import net from "node:net";

type Family = "ipv4" | "ipv6";

const family = (address: string): Family | undefined =>
  net.isIPv4(address) ? "ipv4" : net.isIPv6(address) ? "ipv6" : undefined;

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

/**
 * The addresses a list allows. An entry that does not read (stored before entries were checked)
 * allows nothing, as the proxy's `IpPattern::None`.
 */
export function allowList(patterns: readonly string[]): net.BlockList {
  const list = new net.BlockList();
  for (const pattern of patterns) {
    if (ipPatternProblem(pattern)) continue;
    const slash = pattern.indexOf("/");
    const dash = pattern.indexOf("-");
    if (slash >= 0) {
      const base = pattern.slice(0, slash);
      list.addSubnet(base, Number(pattern.slice(slash + 1)), family(base));
    } else if (dash >= 0) {
      const start = pattern.slice(0, dash);
      list.addRange(start, pattern.slice(dash + 1), family(start));
    } else list.addAddress(pattern, family(pattern));
  }
  return list;
}

/** Whether a list allows an address (an empty list allows all). */
export function allows(list: net.BlockList | null, peer: string): boolean {
  if (!list) return true;
  const kind = family(peer);
  return kind !== undefined && list.check(peer, kind);
}
