'use client';

import { useMutation } from '@tanstack/react-query';
import { TRPCClientError } from '@trpc/client';
import { useRouter } from 'next/navigation';
import { useState } from 'react';
import { useTRPC } from '../lib/trpc';

interface Diagnostic {
  program?: string;
  insnIndex: number;
  insnText: string;
  message: string;
}

function toBase64(bytes: Uint8Array): string {
  let s = '';
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(s);
}

/** Publish by upload: an ELF object or Probeyard assembly; a refused program shows the verifier's diagnostics here. */
export function PublishForm({ name }: { name?: string }) {
  const trpc = useTRPC();
  const router = useRouter();
  const [diagnostics, setDiagnostics] = useState<Diagnostic[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const publish = useMutation(trpc.program.publish.mutationOptions());

  async function onSubmit(e: React.FormEvent<HTMLFormElement>) {
    e.preventDefault();
    setError(null);
    setDiagnostics(null);
    const form = new FormData(e.currentTarget);
    const file = form.get('artifact');
    if (!(file instanceof File) || file.size === 0) {
      setError('Choose a file: a BPF ELF object (.o) or Probeyard assembly (.s).');
      return;
    }
    const programName = String(form.get('name') ?? '').trim();
    const version = String(form.get('version') ?? '').trim();
    const tags = String(form.get('tags') ?? '')
      .split(',')
      .map((t) => t.trim())
      .filter(Boolean);
    const description = String(form.get('description') ?? '').trim();
    try {
      const r = await publish.mutateAsync({
        name: programName,
        version,
        artifact: toBase64(new Uint8Array(await file.arrayBuffer())),
        ...(description ? { description } : {}),
        ...(tags.length ? { tags } : {}),
      });
      router.push(`/programs/${encodeURIComponent(programName)}/${encodeURIComponent(r.version.version)}${r.created ? '?published=1' : ''}`);
      router.refresh();
    } catch (err) {
      if (err instanceof TRPCClientError) {
        const d = (err.data as { diagnostics?: Diagnostic[] } | undefined)?.diagnostics;
        if (d?.length) setDiagnostics(d);
        setError(err.message);
      } else setError(String(err));
    }
  }

  return (
    <form className="form" onSubmit={onSubmit} aria-describedby="publish-help">
      <p id="publish-help" className="hint">
        Parsed, verified with the kernel&apos;s rules for a tracepoint program, and stored tagged <em>module-like, no ABI</em>; compatibility with every kernel
        profile is computed in the background.
      </p>
      <label htmlFor="pub-name">Program name</label>
      <input id="pub-name" name="name" required defaultValue={name} readOnly={Boolean(name)} pattern="[a-z0-9][a-z0-9._\-]{0,62}" />
      <label htmlFor="pub-version">Version (semver)</label>
      <input id="pub-version" name="version" required placeholder="1.0.0" />
      <label htmlFor="pub-file">Artifact (ELF object or assembly, up to 4 MiB)</label>
      <input id="pub-file" name="artifact" type="file" required accept=".o,.s,.asm,.elf,application/octet-stream,text/plain" />
      {!name ? (
        <>
          <label htmlFor="pub-desc">Description</label>
          <input id="pub-desc" name="description" maxLength={500} />
          <label htmlFor="pub-tags">Tags (comma-separated)</label>
          <input id="pub-tags" name="tags" placeholder="sched, latency" />
        </>
      ) : null}
      <button type="submit" className="button primary" disabled={publish.isPending}>
        {publish.isPending ? 'Publishing…' : 'Publish'}
      </button>
      <div aria-live="polite">
        {error ? (
          <div className="alert alert-error" role="alert" data-testid="publish-error">
            <p>{error}</p>
            {diagnostics ? (
              <>
                <p>The verifier refused the program; nothing was stored. Its diagnostics:</p>
                <ol className="mono small">
                  {diagnostics.map((d, i) => (
                    <li key={`${d.insnIndex}-${i}`} className="diag">
                      {d.program ? `${d.program}: ` : ''}insn {d.insnIndex} <code>{d.insnText}</code>: {d.message}
                    </li>
                  ))}
                </ol>
              </>
            ) : null}
          </div>
        ) : null}
      </div>
    </form>
  );
}
