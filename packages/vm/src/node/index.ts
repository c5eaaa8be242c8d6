export { type KernelMapSpec, KernelProgType, type KernelRunResult, KernelRunner } from './kernel-runner.js';
