import { FormatError } from '../errors.js';

/** What the C declaration of one format field says, before offset/size/signed are added. */
export interface FieldDeclaration {
  name: string;
  type: string;
  array: { length: number | undefined; lengthText: string } | undefined;
  dynamic: 'data_loc' | 'rel_loc' | undefined;
}

const identRe = /[A-Za-z_$][A-Za-z0-9_$]*$/;

/**
 * Splits a field declaration as tracefs prints it (`char prev_comm[16]`, `__data_loc char[] name`,
 * `const char * filename`, `__u8 saddr[sizeof(struct sockaddr_in6)]`) into name, type, fixed
 * array length and dynamic kind. `evalLength` turns a non-numeric length text into a number
 * when it can. Throws {@link FormatError} `malformed` (without a line: the caller adds it).
 */
export function parseFieldDeclaration(
  declaration: string,
  evalLength: (text: string) => number | undefined,
): FieldDeclaration {
  let rest = declaration.trim();
  let dynamic: FieldDeclaration['dynamic'];
  const dyn = /^(__data_loc|__rel_loc)\s+/.exec(rest);
  if (dyn) {
    dynamic = dyn[1] === '__data_loc' ? 'data_loc' : 'rel_loc';
    rest = rest.slice(dyn[0].length);
  }
  // Trailing array brackets belong to the name: `name[16]`, `name[2][3]`, `name[]`.
  const lengths: string[] = [];
  while (rest.endsWith(']')) {
    let level = 0;
    let open = -1;
    for (let i = rest.length - 1; i >= 0; i--) {
      const c = rest[i];
      if (c === ']') level++;
      else if (c === '[' && --level === 0) {
        open = i;
        break;
      }
    }
    if (open < 0) throw new FormatError('malformed', `field declaration '${declaration}': unbalanced '['`);
    lengths.unshift(rest.slice(open + 1, -1).trim());
    rest = rest.slice(0, open).trimEnd();
  }
  const m = identRe.exec(rest);
  if (!m) throw new FormatError('malformed', `field declaration '${declaration}': no field name`);
  const name = m[0];
  let type = rest.slice(0, m.index).trim();
  if (type === '' && dynamic === undefined) {
    throw new FormatError('malformed', `field declaration '${declaration}': no type before '${name}'`);
  }
  // `__data_loc char[] name`: the brackets are part of the type; report the element type.
  if (dynamic !== undefined) type = type.replace(/\s*\[\s*\]\s*$/, '');
  let array: FieldDeclaration['array'];
  if (lengths.length > 0) {
    const lengthText = lengths.join('][');
    let length: number | undefined = 1;
    for (const text of lengths) {
      const n = /^\d+$/.test(text) ? Number(text) : text === '' ? undefined : evalLength(text);
      length = length === undefined || n === undefined ? undefined : length * n;
    }
    if (length !== undefined && !Number.isSafeInteger(length)) length = undefined;
    array = { length, lengthText };
  }
  return { name, type, array, dynamic };
}
