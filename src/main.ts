/**
 * `npm start`'s entry (`node dist/main.js`, and each worker of WORKERS=N). With an OTLP endpoint
 * set, OpenTelemetry starts first, so that its instrumentations are in place before the modules
 * they watch (the HTTP server, Fastify, pg, ioredis) are loaded: everything else is imported only
 * afterwards. Without one, no OpenTelemetry module is loaded at all (src/observability/tracing.ts).
 */
import { type OtlpTraces, SettingsError, otlpTraces } from './config/settings.js';
import { setFlagsFromString } from 'node:v8';
import { holdTickObjectShape } from './tick-shape.js';
import { terminalLine } from './core/text.js';

// V8 grows the old generation by a fifth at a time instead of its default factor (docs/performance.md,
// decision 31): the peak RSS is 15-20 MB lower on either database, at no CPU cost measured since the
// server runs as one bundle. Set before any request is served; V8 reads it at each collection.
setFlagsFromString('--heap-growing-percent=20');
holdTickObjectShape();

function tracesSetting(): OtlpTraces | undefined {
  try {
    return otlpTraces(process.env);
  } catch (error) {
    if (!(error instanceof SettingsError)) throw error;
    process.stderr.write(terminalLine(error.message));
    process.exit(2);
  }
}

const traces = tracesSetting();
const tracing = traces && await (await import('./observability/tracing.js')).startTracing(traces.protocol);
const { runServer } = await import('./server.js');
await runServer({ beforeExit: async () => { await tracing?.shutdown(); } });
