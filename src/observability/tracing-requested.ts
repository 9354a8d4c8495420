/**
 * Whether the operator asked for traces: an OTLP endpoint in the standard variables. Kept apart
 * from `tracing.ts` so that the check loads no OpenTelemetry module: without the variables the
 * process holds none in memory, and a request costs what it did before (docs/operations.md).
 */
export function tracingRequested(env: NodeJS.ProcessEnv): boolean {
  const endpoint = (env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? '').trim() || (env.OTEL_EXPORTER_OTLP_ENDPOINT ?? '').trim();
  return endpoint !== '' && (env.OTEL_SDK_DISABLED ?? '').trim().toLowerCase() !== 'true';
}
