// A live session's outputs as the dashboard's panels draw them: each agent's newest map snapshot
// (cumulative, docs/OUTPUTS.md) merged into one view per map by packages/runtime's
// `mergeSnapshots`, the same merge the registry's output store does for a deployment's targets,
// so a live session and a deployment show the same numbers. Its own module so that the page loads
// packages/runtime only when the first snapshot comes.
import { type MapSnapshotJson, type MergedMapView, mergeSnapshots } from '@probeyard/runtime';

export type LiveMapView = MergedMapView;

/** Merges each agent's newest snapshot maps into one view per map name, largest entries first. */
export function mergeLiveMaps(snapshots: readonly { maps: readonly MapSnapshotJson[] }[], maxEntries = 50): LiveMapView[] {
  return mergeSnapshots(snapshots, { maxEntries });
}
