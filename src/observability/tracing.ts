/**
 * OpenTelemetry traces over OTLP, when the operator sets OTEL_EXPORTER_OTLP_ENDPOINT (or
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT): a server span per request with its route (Node's HTTP
 * server, Fastify's hooks and handler), a span per database query and per Redis command. Loaded
 * only then (`otlpTraces` in src/config), by src/main.ts, before the server's own modules: nothing
 * here is in memory otherwise. The SDK reads the standard OTEL_* variables itself (sampler,
 * resource, propagators, batch sizes, exporter headers and timeout); docs/operations.md lists them.
 *
 * What a span may carry is decided here and in `span-redaction.ts`: statement texts without their
 * values, Redis command names without their arguments, URLs without their query, no header.
 */
import { register } from 'node:module';
import FastifyOtel from '@fastify/otel';
import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { IORedisInstrumentation } from '@opentelemetry/instrumentation-ioredis';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources';
import { NodeSDK } from '@opentelemetry/sdk-node';
import type { SpanExporter } from '@opentelemetry/sdk-trace';
import { createAddHookMessageChannel } from 'import-in-the-middle';
import type { OtlpProtocol } from '../config/settings.js';
import { type SqliteQueryTracer, traceSqliteQueriesWith } from '../storage/query-tracing.js';
import { redactingExporter } from './span-redaction.js';

/** How long a stop waits for the last spans to be sent before it exits without them. */
const SHUTDOWN_FLUSH_MS = 2_000;

/** `service.name` unless OTEL_SERVICE_NAME or OTEL_RESOURCE_ATTRIBUTES names another. */
const DEFAULT_SERVICE_NAME = 'svc-identity';

/**
 * The OTLP exporter of the protocol the settings name; it reads its endpoint, headers,
 * compression and timeout from the OTEL_EXPORTER_OTLP_* variables itself. Only the one chosen is
 * loaded.
 */
async function otlpExporter(protocol: OtlpProtocol): Promise<SpanExporter> {
  switch (protocol) {
    case 'http/protobuf': return new (await import('@opentelemetry/exporter-trace-otlp-proto')).OTLPTraceExporter();
    case 'http/json': return new (await import('@opentelemetry/exporter-trace-otlp-http')).OTLPTraceExporter();
    case 'grpc': return new (await import('@opentelemetry/exporter-trace-otlp-grpc')).OTLPTraceExporter();
  }
}

/** The SQL statement's first word, as pg's instrumentation names its spans' operation. */
function operationOf(text: string): string {
  return /^\s*(\w+)/.exec(text)?.[1]?.toUpperCase() ?? 'QUERY';
}

/**
 * A span per SQLite statement run under a request's span, with the attributes pg's
 * instrumentation gives PostgreSQL's (the stable database conventions). Statements outside a
 * request (migrations, the janitor, the delivery queues' polls) are not traced, as with pg and
 * ioredis below. A failure is marked with SQLite's error code, not its message.
 */
function sqliteTracer(): SqliteQueryTracer {
  const tracer = trace.getTracer('svc-identity/sqlite');
  return {
    trace(text, execute) {
      if (trace.getActiveSpan() === undefined) return execute();
      const operation = operationOf(text);
      const span = tracer.startSpan(operation, {
        kind: SpanKind.CLIENT,
        attributes: { 'db.system.name': 'sqlite', 'db.operation.name': operation, 'db.query.text': text },
      });
      try {
        return execute();
      } catch (error) {
        const code = (error as { code?: unknown }).code;
        span.setStatus({ code: SpanStatusCode.ERROR });
        span.setAttribute('error.type', typeof code === 'string' ? code : 'error');
        throw error;
      } finally {
        span.end();
      }
    },
  };
}

/**
 * Starts the SDK and its instrumentations. The ESM loader hook is registered the documented way
 * (`module.register` of import-in-the-middle's hook, told only of the modules instrumentations
 * ask for) before any of those modules is imported; pg and ioredis, which the service loads with
 * `require`, are patched by the same instrumentations through require-in-the-middle.
 */
export async function startTracing(protocol: OtlpProtocol): Promise<{ shutdown(): Promise<unknown> }> {
  const { registerOptions, waitForAllMessagesAcknowledged } = createAddHookMessageChannel();
  register('import-in-the-middle/hook.mjs', import.meta.url, registerOptions);
  const sdk = new NodeSDK({
    resource: defaultResource().merge(resourceFromAttributes({ 'service.name': DEFAULT_SERVICE_NAME })),
    // Batched as OTEL_BSP_* say; every span passes the redaction on its way out.
    traceExporter: redactingExporter(await otlpExporter(protocol)),
    // Traces only: the service's metrics are Prometheus's (METRICS_PORT), its logs are pino's.
    metricReaders: [],
    logRecordProcessors: [],
    instrumentations: [
      // No header is copied into a span (none is named here); URLs lose their query in redactingExporter.
      new HttpInstrumentation(),
      new FastifyOtel.FastifyOtelInstrumentation({ registerOnInitialization: true }),
      // Statement texts only: parameter values are not recorded (`enhancedDatabaseReporting`).
      new PgInstrumentation({ enhancedDatabaseReporting: false, requireParentSpan: true }),
      // The command's name alone: keys hold hashed ids and values counters or sealed answers.
      new IORedisInstrumentation({ dbStatementSerializer: (command) => command, requireParentSpan: true }),
    ],
  });
  sdk.start();
  traceSqliteQueriesWith(sqliteTracer());
  await waitForAllMessagesAcknowledged();
  return {
    // A collector that is down or refuses the last batch must neither fail nor hold up the stop.
    shutdown: () => Promise.race([
      sdk.shutdown().catch(() => undefined),
      new Promise<void>((resolve) => { setTimeout(resolve, SHUTDOWN_FLUSH_MS).unref(); }),
    ]),
  };
}
