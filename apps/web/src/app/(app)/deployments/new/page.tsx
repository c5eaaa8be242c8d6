import type { Metadata } from 'next';
import Link from 'next/link';
import { redirect } from 'next/navigation';
import { DeployForm } from '../../../../components/deploy-form';
import { hasRole } from '../../../../lib/roles';
import { api, requireSession } from '../../../../lib/session';

export const metadata: Metadata = { title: 'New deployment' };

export default async function NewDeploymentPage({ searchParams }: { searchParams: Promise<{ name?: string; version?: string; selector?: string }> }) {
  const sp = await searchParams;
  const session = await requireSession();
  if (!hasRole(session.role, 'publisher')) redirect('/deployments');
  const client = await api();
  const { programs } = await client.program.list.query({ limit: 200 });
  const withVersions = await Promise.all(
    programs.map(async (p) => ({
      name: p.name,
      versions: (await client.version.list.query({ name: p.name, limit: 50 })).versions.filter((v) => !v.yanked).map((v) => v.version),
    })),
  );
  const deployable = withVersions.filter((p) => p.versions.length > 0);
  return (
    <>
      <p className="crumbs">
        <Link href="/deployments">Deployments</Link> /
      </p>
      <h1>New deployment</h1>
      {deployable.length === 0 ? (
        <p className="empty">
          Nothing to deploy yet: publish a program first (<Link href="/programs">Programs</Link>). Yanked versions cannot be deployed.
        </p>
      ) : (
        <DeployForm programs={deployable} initial={sp} />
      )}
    </>
  );
}
