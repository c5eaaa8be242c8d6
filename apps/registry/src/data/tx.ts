import type { Prisma } from '../generated/prisma/client.js';

/** A Prisma interactive transaction. Inside a `$transaction` callback use only this, never the outer client. */
export type Tx = Prisma.TransactionClient;

/** Who made a change, for the audit log. */
export interface Actor {
  kind: 'user' | 'agent' | 'admin' | 'system';
  id: string | null;
}
