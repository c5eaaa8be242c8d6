import { VmError } from '../errors.js';
import type { LoadedProgram } from '../program.js';
import { ArrayMap } from './array-map.js';
import { HashMap } from './hash-map.js';
import { type BpfMap, type MapContext, type MapSpec, MapType, mapTypeNames } from './map.js';
import { QueueStackMap } from './queue-stack-map.js';
import { RingBuffer } from './ring-buffer.js';
import { StackTraceMap } from './stack-trace-map.js';

/** A program array: slots hold loaded programs. */
export type ProgArray = ArrayMap<LoadedProgram>;

/** Creates a map from its spec (`BPF_MAP_CREATE`); a spec the kernel refuses throws `invalid-map`. */
export function createMap(spec: MapSpec, context: MapContext = { cpuCount: 1 }): BpfMap {
  if (!Number.isInteger(spec.maxEntries) || spec.maxEntries <= 0) {
    throw new VmError('invalid-map', `create map ${spec.name}: max_entries must be a positive integer`);
  }
  switch (spec.type) {
    case MapType.hash:
    case MapType.percpuHash:
    case MapType.lruHash:
    case MapType.lruPercpuHash:
      return new HashMap(spec, context);
    case MapType.array:
    case MapType.percpuArray:
    case MapType.perfEventArray:
    case MapType.progArray:
    // a cgroup array holds cgroup fds that user space stores (libbpf-tools' `-c CG`); a program
    // can only pass it to bpf_current_task_under_cgroup, and the VM's slots stay empty
    case MapType.cgroupArray:
      return new ArrayMap(spec, context);
    case MapType.ringbuf:
      return new RingBuffer(spec);
    case MapType.queue:
    case MapType.stack:
      return new QueueStackMap(spec);
    case MapType.stackTrace:
      return new StackTraceMap(spec);
    default:
      throw new VmError(
        'unsupported',
        `create map ${spec.name}: map type ${String(spec.type)} is not supported (supported: ${Object.values(mapTypeNames).join(', ')})`,
      );
  }
}
