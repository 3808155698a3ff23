import { codeName } from '../core/rpc-code.js';
import { isRpcError } from '../core/rpc-error.js';
import { sampledTraceId } from '../tracing/spans.js';
import {
  Counter,
  Gauge,
  Histogram,
  Registry,
  collectDefaultMetrics,
  type LabelValues,
  type RegistryContentType,
} from 'prom-client';

/** Latency buckets (seconds) for requests and upstream calls: 5 ms to 10 s. */
const LATENCY = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** What the database layer reports about its pool, read at scrape time. */
export interface PoolStats {
  used: number;
  free: number;
  pending: number;
  max: number;
}

/**
 * The API process's metrics, on a registry of its own (one per composed app, so tests can
 * run several): HTTP by route template, STS exchanges, upstream OIDC fetches, the database.
 */
export class ApiMetrics {
  readonly registry: Registry<RegistryContentType> = new Registry<RegistryContentType>();
  readonly httpDuration: Histogram<'route' | 'method' | 'code'>;
  readonly upstreamDuration: Histogram<'kind'>;
  readonly dbQueryDuration: Histogram<'outcome'>;

  readonly httpRequests = new Counter({
    name: 'arbor_http_requests_total',
    help: 'HTTP requests answered, by route template, method and status code.',
    labelNames: ['route', 'method', 'code'] as const,
    registers: [this.registry],
  });

  readonly stsExchanges = new Counter({
    name: 'arbor_sts_exchanges_total',
    help: 'STS token exchanges, by outcome (issued, or the google.rpc code name of the refusal).',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  /** Labelled by budget class only: a caller's uid would make one series per caller. */
  readonly budgetSpent = new Counter({
    name: 'arbor_budget_spent_total',
    help: 'Calls that spent a point of their cost budgets, by budget class.',
    labelNames: ['budget'] as const,
    registers: [this.registry],
  });

  readonly budgetRefused = new Counter({
    name: 'arbor_budget_refused_total',
    help: 'Calls refused RESOURCE_EXHAUSTED by a spent cost budget, by budget class and scope (identity, organization).',
    labelNames: ['budget', 'scope'] as const,
    registers: [this.registry],
  });

  readonly upstreamFetches = new Counter({
    name: 'arbor_upstream_fetches_total',
    help: 'Fetches of upstream OIDC documents, by kind (discovery, jwks) and outcome.',
    labelNames: ['kind', 'outcome'] as const,
    registers: [this.registry],
  });

  /**
   * @param processMetrics also export Node's own (CPU, memory, event loop, GC): processes only.
   * @param exemplars the latency histograms carry the trace id of a sampled request as an
   *   exemplar of its bucket (`trace_id`); exemplars exist only in the OpenMetrics format, so
   *   the registry then speaks it (Prometheus asks for it; docs/operations.md, "Tracing").
   */
  constructor(
    processMetrics = false,
    private readonly exemplars = false,
  ) {
    if (exemplars) this.registry.setContentType(Registry.OPENMETRICS_CONTENT_TYPE);
    if (processMetrics) collectDefaultMetrics({ register: this.registry });
    this.httpDuration = new Histogram({
      name: 'arbor_http_request_duration_seconds',
      help: 'Time to answer an HTTP request, by route template, method and status code.',
      labelNames: ['route', 'method', 'code'] as const,
      buckets: LATENCY,
      registers: [this.registry],
      enableExemplars: this.exemplars,
    });
    this.upstreamDuration = new Histogram({
      name: 'arbor_upstream_fetch_duration_seconds',
      help: 'Time of upstream OIDC document fetches, by kind.',
      labelNames: ['kind'] as const,
      buckets: LATENCY,
      registers: [this.registry],
      enableExemplars: this.exemplars,
    });
    this.dbQueryDuration = new Histogram({
      name: 'arbor_db_query_duration_seconds',
      help: 'Time of database queries, by outcome (ok, error).',
      labelNames: ['outcome'] as const,
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers: [this.registry],
      enableExemplars: this.exemplars,
    });
  }

  /**
   * `seconds` into the latency histogram `h`, with the active trace's id as the exemplar
   * when exemplars are on and the request's trace is sampled.
   */
  observe<T extends string>(h: Histogram<T>, labels: LabelValues<T>, seconds: number): void {
    if (!this.exemplars) {
      h.observe(labels, seconds);
      return;
    }
    const traceId = sampledTraceId();
    h.observe({
      labels,
      value: seconds,
      ...(traceId === undefined ? {} : { exemplarLabels: { trace_id: traceId } }),
    } as never);
  }

  /** Pool gauges (`arbor_db_pool_connections{state}`), read from `stats` at each scrape. */
  observePool(stats: () => PoolStats | undefined): void {
    new Gauge({
      name: 'arbor_db_pool_connections',
      help: 'Database pool connections, by state (used, free, pending acquires, max).',
      labelNames: ['state'] as const,
      registers: [this.registry],
      collect() {
        const s = stats();
        if (!s) return;
        for (const [state, n] of Object.entries(s) as Array<[string, number]>)
          this.set({ state }, n);
      },
    });
  }

  /**
   * The read caches (docs/operations.md, "Read cache"): reads by cache and outcome (`hits`,
   * `misses`, `bypassed` while the change feed cannot vouch), and whether the feed vouches.
   */
  observeReadCaches(
    caches: Readonly<Record<string, { hits: number; misses: number; bypassed: number }>>,
    vouching: () => boolean | undefined,
  ): void {
    new Gauge({
      name: 'arbor_read_cache_reads',
      help: 'Reads through each read cache since start, by outcome.',
      labelNames: ['cache', 'outcome'] as const,
      registers: [this.registry],
      collect() {
        for (const [cache, stats] of Object.entries(caches))
          for (const [outcome, n] of Object.entries(stats)) this.set({ cache, outcome }, n);
      },
    });
    new Gauge({
      name: 'arbor_read_cache_serving',
      help: '1 while the change feed proves the read caches current, 0 while they are bypassed.',
      registers: [this.registry],
      collect() {
        const v = vouching();
        if (v !== undefined) this.set(v ? 1 : 0);
      },
    });
  }

  /**
   * Counts and times what a JSON fetcher (`getJson(url)`, the STS's outbound fetcher) fetches:
   * the discovery and JWKS documents, outcome `ok` or `error` (every failure is one error to a
   * client; the log says which).
   */
  instrumentJsonFetcher<F extends { getJson(url: string): Promise<Record<string, unknown>> }>(
    inner: F,
  ): Pick<F, 'getJson'> {
    return {
      getJson: async (url: string) => {
        const kind = url.includes('/.well-known/openid-configuration') ? 'discovery' : 'jwks';
        const started = performance.now();
        try {
          const doc = await inner.getJson(url);
          this.upstreamFetches.inc({ kind, outcome: 'ok' });
          return doc;
        } catch (e) {
          this.upstreamFetches.inc({ kind, outcome: 'error' });
          throw e;
        } finally {
          this.observe(this.upstreamDuration, { kind }, (performance.now() - started) / 1000);
        }
      },
    };
  }

  /** Wraps the STS's exchange so that each call counts once by its outcome. */
  countExchanges<A extends unknown[], R>(exchange: (...a: A) => Promise<R>) {
    return async (...a: A): Promise<R> => {
      try {
        const r = await exchange(...a);
        this.stsExchanges.inc({ outcome: 'issued' });
        return r;
      } catch (e) {
        this.stsExchanges.inc({ outcome: isRpcError(e) ? codeName(e.code) : 'INTERNAL' });
        throw e;
      }
    };
  }
}
