// Node-only part of @probeyard/compat: kernel profiles from files and the live tracefs.
export { readProfile, readProfileTree, readProfileTraceDat, readLiveProfile } from './read-profile.js';
