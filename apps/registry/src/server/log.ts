/** One structured log line (JSON) per event; requests log tenant, procedure, status and duration. */
export type Logger = (record: Record<string, unknown>) => void;

export const jsonLogger: Logger = (record) => {
  process.stdout.write(`${JSON.stringify({ time: new Date().toISOString(), ...record })}\n`);
};

export const silentLogger: Logger = () => {};
