import { z } from 'zod';

/** Bytes a base64 text decodes to (padded or not), without decoding it. */
export function base64ByteLength(text: string): number {
  const pad = text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0;
  return Math.floor((text.length * 3) / 4) - pad;
}

const mib = (n: number) => (n % (1024 * 1024) === 0 ? `${n / 1024 / 1024} MiB` : `${Math.round((n / 1024 / 1024) * 10) / 10} MiB`);

/**
 * A base64 field of at most `maxBytes` decoded bytes. The length of the text is checked first (so
 * a huge text never reaches the pattern), then the exact decoded size: the text limit alone admits
 * up to two bytes more, whose contents then fail later with an unrelated message.
 */
export function base64Schema(field: string, maxBytes: number) {
  return z
    .string()
    .max(Math.ceil(maxBytes / 3) * 4, `${field}: larger than ${maxBytes} bytes (${mib(maxBytes)})`)
    .regex(/^[A-Za-z0-9+/]*={0,2}$/, `${field}: not base64`)
    .superRefine((text, ctx) => {
      const bytes = base64ByteLength(text);
      if (bytes > maxBytes) ctx.addIssue({ code: 'custom', message: `${field}: ${bytes} bytes, larger than ${maxBytes} bytes (${mib(maxBytes)})` });
    });
}
