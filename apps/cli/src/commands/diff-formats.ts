import { diffProfiles, formatEventDiffs } from '@probeyard/compat';
import { type Command, parseCommandArgs } from '../command.js';
import { CliError, ExitCode } from '../io.js';
import { loadProfile } from './inspect.js';

const help = `usage: probeyard diff-formats A B [--event SYSTEM/EVENT|EVENT] [--all] [--json]

Compares the event formats of two kernels, field by field: added, removed, moved, resized, type
changed, became dynamic (__data_loc), no longer dynamic, signedness changed.

  A, B           kernel profiles: an events/ tree, a tarball of one, a trace.dat, or live
  --event E      only this event (prints "same layout" when nothing changed)
  --all          also list events only one side has
  --json         print the diff as JSON

Exit codes: 0 no layout differences, 1 differences, 2 unusable input.`;

export const diffFormatsCommand: Command = {
  name: 'diff-formats',
  summary: 'field-by-field differences of event formats between two kernels',
  help,
  async run(args, io) {
    const parsed = parseCommandArgs(args, { event: { type: 'string' }, all: { type: 'boolean', default: false }, json: { type: 'boolean', default: false } }, help);
    const { values, positionals } = parsed;
    if (positionals.length !== 2) throw new CliError(`expected two kernels A and B, got ${positionals.length}\n\n${help}`);
    const a = await loadProfile(positionals[0]!);
    const b = await loadProfile(positionals[1]!);
    let diffs = diffProfiles(a, b, values.event === undefined ? {} : { event: values.event });
    if (values.event !== undefined && diffs.length === 0) throw new CliError(`no event ${values.event} in either kernel`, ExitCode.refused);
    if (!values.all && values.event === undefined) diffs = diffs.filter((d) => d.status === 'changed');
    if (values.json) io.stdout(`${JSON.stringify(diffs, null, 2)}\n`);
    else io.stdout(formatEventDiffs(diffs) || 'no layout differences\n');
    return diffs.some((d) => d.status !== 'same') ? ExitCode.refused : ExitCode.ok;
  },
};
