import { BlockList, isIP } from 'node:net';
import { RegistryError } from '../errors.js';

/**
 * Proxies whose `X-Forwarded-For` the registry believes (the web app's server, a load balancer):
 * addresses (`127.0.0.1`, `::1`) or subnets (`10.0.0.0/8`). A request from anyone else is
 * attributed to its own socket address, whatever it sends: otherwise anyone could pick their
 * address and walk around the per-address login limit.
 */
export class TrustedProxies {
  private readonly list = new BlockList();
  readonly entries: readonly string[];

  constructor(entries: readonly string[]) {
    this.entries = entries;
    for (const raw of entries) {
      const entry = raw.trim();
      const [addr = '', bits] = entry.split('/');
      const family = isIP(addr);
      const prefix = bits === undefined ? undefined : Number(bits);
      if (family === 0 || (prefix !== undefined && !(Number.isInteger(prefix) && prefix >= 0 && prefix <= (family === 4 ? 32 : 128)))) {
        throw new RegistryError('bad_request', `trusted proxy: not an address or subnet: ${raw}`, { entry: raw });
      }
      const type = family === 4 ? 'ipv4' : 'ipv6';
      if (prefix === undefined) this.list.addAddress(addr, type);
      else this.list.addSubnet(addr, prefix, type);
    }
  }

  has(address: string): boolean {
    const family = isIP(address);
    return family !== 0 && this.list.check(address, family === 4 ? 'ipv4' : 'ipv6');
  }
}

/** `::ffff:1.2.3.4` (an IPv4 client on a dual-stack socket) → `1.2.3.4`. */
function normalize(address: string): string {
  const a = address.trim();
  return /^::ffff:\d+\.\d+\.\d+\.\d+$/i.test(a) ? a.slice(7) : a;
}

/**
 * The client's address: the socket's, or, when the socket's peer is a trusted proxy, the address
 * that proxy says it forwarded for — walking `X-Forwarded-For` from the right past trusted hops
 * only (what a client wrote itself, on the left, is never believed). An entry that is not an
 * address stops the walk at the hop that sent it.
 */
export function clientAddress(remote: string | undefined, forwardedFor: string | string[] | undefined, trusted: TrustedProxies | undefined): string | undefined {
  if (remote === undefined) return undefined;
  let current = normalize(remote);
  if (!trusted || forwardedFor === undefined) return current;
  const hops = (Array.isArray(forwardedFor) ? forwardedFor.join(',') : forwardedFor)
    .split(',')
    .map(normalize)
    .filter((h) => h !== '');
  while (trusted.has(current)) {
    const next = hops.pop();
    if (next === undefined || isIP(next) === 0) break;
    current = next;
  }
  return current;
}

/** `PROBEYARD_TRUSTED_PROXIES` (comma-separated), or none. */
export function envTrustedProxies(): string[] {
  return (process.env.PROBEYARD_TRUSTED_PROXIES ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}
