/**
 * A worker of WORKERS=N answers the primary's `/metrics` (prom-client answers once an
 * AggregatorRegistry is made in it) from its first moment, with no series until `serve` gives it
 * its registry: a worker still loading the service would otherwise hold every scrape 5 s (the
 * primary waits for each worker) and fail it, each time a worker is replaced (attack138 F3).
 */
import { AggregatorRegistry } from 'prom-client';

export function answerPrimaryMetrics(): void {
  new AggregatorRegistry();
}
