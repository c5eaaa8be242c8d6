// Node-only part of @probeyard/compat: kernel profiles from files and the live tracefs.
export { kernelVersionOfTree, readProfile, readProfileTree, readProfileTraceDat, readLiveProfile } from './read-profile.js';
