/**
 * `npm start`'s entry (`node dist/main.js`, and each worker of WORKERS=N). With an OTLP endpoint
 * set, OpenTelemetry starts first, so that its instrumentations are in place before the modules
 * they watch (the HTTP server, Fastify, pg, ioredis) are loaded: everything else is imported only
 * afterwards. Without one, no OpenTelemetry module is loaded at all (src/observability/tracing.ts).
 */
import { type OtlpTraces, SettingsError, otlpTraces } from './config/settings.js';

function tracesSetting(): OtlpTraces | undefined {
  try {
    return otlpTraces(process.env);
  } catch (error) {
    if (!(error instanceof SettingsError)) throw error;
    process.stderr.write(`${error.message}\n`);
    process.exit(2);
  }
}

const traces = tracesSetting();
const tracing = traces && await (await import('./observability/tracing.js')).startTracing(traces.protocol);
const { runServer } = await import('./server.js');
await runServer({ beforeExit: async () => { await tracing?.shutdown(); } });
