// Node-only parts of @probeyard/verifier.
export { KernelLoader, type KernelVerdict } from './kernel-loader.js';
