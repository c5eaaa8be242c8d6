// Child process of the tracefs SIGINT/SIGTERM test: opens a live stream on the given tracefs
// mount, prints the instance path, then reads until a signal ends it.
import { openTracefsStream } from '../../src/node/tracefs-live.js';

const stream = openTracefsStream({ events: ['sched:sched_switch'], tracefs: { path: process.argv[2]!, mountedHere: false } });
console.log(stream.instancePath);
for await (const batch of stream) while (batch.next());
