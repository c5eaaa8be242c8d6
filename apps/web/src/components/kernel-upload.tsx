'use client';

import { useMutation } from '@tanstack/react-query';
import { useRouter } from 'next/navigation';
import { useState } from 'react';
import { useTRPC } from '../lib/trpc';

function toBase64(bytes: Uint8Array): string {
  let s = '';
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(s);
}

/** Upload an `events/` tree as .tar/.tar.gz, or a trace.dat: the formats become a profile; compat recomputes. */
export function KernelUpload() {
  const trpc = useTRPC();
  const router = useRouter();
  const [error, setError] = useState<string | null>(null);
  const upload = useMutation(trpc.kernel.upload.mutationOptions());
  async function onSubmit(e: React.FormEvent<HTMLFormElement>) {
    e.preventDefault();
    setError(null);
    const form = new FormData(e.currentTarget);
    const file = form.get('file');
    const name = String(form.get('name') ?? '').trim();
    if (!(file instanceof File) || file.size === 0) return setError('Choose a .tar.gz of an events/ tree or a trace.dat file.');
    const data = toBase64(new Uint8Array(await file.arrayBuffer()));
    const isDat = /\.dat$/i.test(file.name);
    const partial = form.get('partial') === 'on';
    try {
      await upload.mutateAsync(isDat ? { name, traceDat: data } : { name, tarball: data, ...(partial ? { partial: true } : {}) });
      router.push(`/kernels/${name}`);
      router.refresh();
    } catch (err) {
      setError((err as Error).message);
    }
  }
  return (
    <form className="form" onSubmit={onSubmit}>
      <label htmlFor="k-name">Profile name</label>
      <input id="k-name" name="name" required pattern="[a-z0-9][a-z0-9._\-]{0,62}" placeholder="linux-6-18" />
      <label htmlFor="k-file">events/ tree (.tar, .tar.gz) or trace.dat, up to 5 MiB</label>
      <input id="k-file" name="file" type="file" required accept=".tar,.gz,.tgz,.dat" />
      <label htmlFor="k-partial">
        <input id="k-partial" name="partial" type="checkbox" /> The tree holds some of the kernel’s events only (partial: a missing event is unknown, not incompatible; a trace.dat is always partial)
      </label>
      <button type="submit" className="button primary" disabled={upload.isPending}>
        {upload.isPending ? 'Uploading…' : 'Upload'}
      </button>
      {error ? (
        <p className="alert alert-error" role="alert">
          {error}
        </p>
      ) : null}
    </form>
  );
}
