/** A connection's peer address as people read it: an IPv4 address a dual-stack socket maps into IPv6 shown as IPv4. */
export function plainAddress(remote: string): string {
  return /^::ffff:\d+\.\d+\.\d+\.\d+$/i.test(remote) ? remote.slice(7) : remote;
}
