import { describe, expect, it } from 'vitest';
import { clientAddress, TrustedProxies } from './client-address.js';

describe('clientAddress', () => {
  const trusted = new TrustedProxies(['127.0.0.1', '::1', '10.1.0.0/16']);
  it.each([
    ['no trusted proxies: the socket, whatever the header says', '203.0.113.9', '1.1.1.1', undefined, '203.0.113.9'],
    ['an untrusted peer cannot pick its address', '203.0.113.9', '1.1.1.1', trusted, '203.0.113.9'],
    ['the web server on loopback forwards the browser', '127.0.0.1', '198.51.100.4', trusted, '198.51.100.4'],
    ['IPv4 on a dual-stack socket', '::ffff:127.0.0.1', '198.51.100.4', trusted, '198.51.100.4'],
    ['IPv6 loopback', '::1', '2001:db8::7', trusted, '2001:db8::7'],
    ['the rightmost untrusted hop, not what the client wrote on the left', '127.0.0.1', '6.6.6.6, 198.51.100.4, 10.1.2.3', trusted, '198.51.100.4'],
    ['a repeated header', '127.0.0.1', ['6.6.6.6', '198.51.100.4'], trusted, '198.51.100.4'],
    ['a trusted peer without the header is itself', '127.0.0.1', undefined, trusted, '127.0.0.1'],
    ['garbage stops at the hop that sent it', '127.0.0.1', 'not-an-ip', trusted, '127.0.0.1'],
    ['only trusted hops: the leftmost', '127.0.0.1', '10.1.9.9', trusted, '10.1.9.9'],
  ] as const)('%s', (_, remote, xff, proxies, expected) => {
    expect(clientAddress(remote, xff as string | string[] | undefined, proxies)).toBe(expected);
  });

  it.each(['localhost', '1.2.3.4/33', '::1/129', '1.2.3'])('refuses %s as a trusted proxy', (entry) => {
    expect(() => new TrustedProxies([entry])).toThrow(/trusted proxy: not an address or subnet/);
  });
});
