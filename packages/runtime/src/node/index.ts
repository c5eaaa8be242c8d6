// Node-only part of @probeyard/runtime: opening trace feeds (files, the live tracefs).
export { type Feed, type OpenFeedOptions, openFeed } from './feed.js';
