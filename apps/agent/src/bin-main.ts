// `probeyard-agent` from the sources (tests spawn it with tsx); bin/probeyard-agent.js runs dist/main.js.
import { main } from './main.js';

// Exit when done: an idle keep-alive connection to the registry must not hold the process.
process.exit(await main(process.argv.slice(2)));
