// Node-only parts of @probeyard/runtime (files, the live feed).
export {};
