import { describe, expect, it } from 'vitest';
import { assembleInstructions } from './assembler/assemble.js';
import { helperId, helperName, helpers } from './helpers.js';
import { conformanceGroupsOfProgram, isaVersionOfProgram } from './info.js';

describe('helpers', () => {
  // The tracing helpers Probeyard's runtime answers (DESIGN.md), with the kernel's ids.
  it.each([
    ['map_lookup_elem', 1],
    ['map_update_elem', 2],
    ['map_delete_elem', 3],
    ['probe_read', 4],
    ['ktime_get_ns', 5],
    ['trace_printk', 6],
    ['get_prandom_u32', 7],
    ['get_smp_processor_id', 8],
    ['tail_call', 12],
    ['get_current_pid_tgid', 14],
    ['get_current_uid_gid', 15],
    ['get_current_comm', 16],
    ['perf_event_output', 25],
    ['probe_read_str', 45],
    ['probe_read_user', 112],
    ['probe_read_kernel', 113],
    ['probe_read_user_str', 114],
    ['probe_read_kernel_str', 115],
    ['ktime_get_boot_ns', 125],
    ['ringbuf_output', 130],
    ['ringbuf_reserve', 131],
    ['ringbuf_submit', 132],
    ['ringbuf_discard', 133],
    ['ringbuf_query', 134],
  ] as const)('%s is %i', (name, id) => {
    expect(helperId(name)).toBe(id);
    expect(helperId(`bpf_${name}`)).toBe(id);
    expect(helperName(id)).toBe(name);
  });

  it('knows nothing of unknown ids and names', () => {
    expect(helperName(0)).toBeUndefined();
    expect(helperName(100000)).toBeUndefined();
    expect(helperId('unspec')).toBeUndefined();
    expect(helperId('no_such_helper')).toBeUndefined();
    expect(helpers().length).toBeGreaterThan(200);
  });
});

describe('program-level queries', () => {
  it('reports the highest ISA version and the groups used', () => {
    const v1 = assembleInstructions('r0 = 0\nr0 += 1\nexit');
    expect(isaVersionOfProgram(v1)).toBe('v1');
    expect(conformanceGroupsOfProgram(v1)).toEqual(['base32', 'base64']);
    const v4 = assembleInstructions('w0 = 1\nr1 = (s8)r0\nif w1 > 2 goto +0\nexit');
    expect(isaVersionOfProgram(v4)).toBe('v4');
  });
});
