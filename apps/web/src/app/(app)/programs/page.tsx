import type { Metadata } from 'next';
import { api } from '../../../lib/session';

export const metadata: Metadata = { title: 'Programs' };

export default async function ProgramsPage() {
  const { programs } = await (await api()).program.list.query();
  return (
    <>
      <h1>Programs</h1>
      {programs.length === 0 ? (
        <p className="empty">No programs yet. Publish one with the form on a program page or `probeyard publish FILE --name N --version V`.</p>
      ) : (
        <ul>
          {programs.map((p) => (
            <li key={p.id}>{p.name}</li>
          ))}
        </ul>
      )}
    </>
  );
}
