import type { FastifyInstance } from 'fastify';
import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import { answeredErrorCode } from '../api/errors.js';
import type { SiteDirectory } from '../config/site.js';
import type { OcppObserver } from '../ocpp/connection/observed-connection.js';
import type { ConnectorView } from '../ocpp/port.js';
import type { Db } from '../store/database.js';
import { DatabaseFigures } from './database-figures.js';
import { HttpSeries } from './http-series.js';
import { PlainCounter, PlainHistogram } from './plain-series.js';
import type { StorageFigures } from './storage-figures.js';

/** What the metrics read from the running gateway at scrape time. */
export interface MetricsSources {
  db: Db;
  site: SiteDirectory;
  chargers: {
    onlineByProtocol(): Map<string, number>;
    connector(chargerId: string, connectorId: string): ConnectorView;
  };
  storage: StorageFigures;
}

type Labelled = { labels: Record<string, string>; value: number }[];

/** Sets a gauge (or counter) to exactly these labelled values on every scrape. */
function setAll(metric: Gauge | Counter, values: Labelled): void {
  metric.reset();
  for (const { labels, value } of values) {
    if (metric instanceof Gauge) metric.set(labels, value);
    else if (value > 0) metric.inc(labels, value);
    else metric.inc(labels, 0);
  }
}

export const LATENCY_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
const START_ROUTE = '/v1/sessions';

/**
 * The gateway's Prometheus metrics. Messages and HTTP requests are counted in this process (they
 * start again at 0 after a restart, as Prometheus counters may); everything that lives in the
 * database is read from it at scrape time, so it is authoritative and survives restarts.
 */
export class GatewayMetrics implements OcppObserver {
  readonly registry = new Registry();
  private readonly ocppMessages = new PlainCounter(
    'fleetgw_ocpp_messages_total',
    'OCPP calls handled (in: from chargers) or sent (out: to chargers), by outcome',
  );
  private readonly ocppDuration = new PlainHistogram(
    'fleetgw_ocpp_call_duration_seconds',
    'in: time to answer a charger; out: time until the charger answered',
    LATENCY_BUCKETS,
  );
  private readonly http = new HttpSeries(LATENCY_BUCKETS);
  private readonly startRequests: Counter;

  constructor(private readonly sources: MetricsSources) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    this.ocppMessages.register(this.registry);
    this.ocppDuration.register(this.registry);
    this.http.register(this.registry);
    this.startRequests = new Counter({
      name: 'fleetgw_start_requests_total',
      help: 'Start Charge Session requests by result: started, or the error code answered',
      labelNames: ['result'],
      registers,
    });
    this.databaseMetrics(registers);
  }

  call(
    protocol: string,
    action: string,
    direction: 'in' | 'out',
    outcome: string,
    seconds: number,
  ): void {
    // Its labels are kept only the first time a key is seen.
    const key = `${protocol} ${action} ${direction}`;
    this.ocppMessages.inc(`${key} ${outcome}`, { protocol, action, direction, outcome });
    this.ocppDuration.observe(key, { protocol, action, direction }, seconds);
  }

  /** Counts every answer of `app` by its route pattern (never the raw URL: bounded labels). */
  observeHttp(app: FastifyInstance): void {
    countHttpAnswers(app, this.http, this.startRequests);
  }

  /** Browsers with the console's live event stream open, read at scrape time. */
  observeConsole(clients: () => number): void {
    new Gauge({
      name: 'fleetgw_console_event_clients',
      help: 'Open console event streams (GET /admin/v1/events)',
      registers: [this.registry],
      collect() {
        this.set(clients());
      },
    });
  }

  /** Open alerts by kind and the webhook's undelivered events, read at scrape time. */
  observeAlerts(open: () => readonly { kind: string }[], undelivered: () => number): void {
    new Gauge({
      name: 'fleetgw_alerts_open',
      help: 'Open alerts by kind (GET /admin/v1/alerts)',
      labelNames: ['kind'],
      registers: [this.registry],
      collect() {
        this.reset();
        for (const a of open()) this.inc({ kind: a.kind });
      },
    });
    new Gauge({
      name: 'fleetgw_alert_webhook_undelivered',
      help: 'Alert events the webhook has not accepted yet (given-up ones not counted)',
      registers: [this.registry],
      collect() {
        this.set(undelivered());
      },
    });
  }

  async scrape(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }

  private databaseMetrics(registers: Registry[]): void {
    const { sources } = this;
    const figures = new DatabaseFigures(sources.db);
    const gauge = (name: string, help: string, labelNames: string[], read: () => Labelled) =>
      new Gauge({
        name,
        help,
        labelNames,
        registers,
        collect() {
          setAll(this, read());
        },
      });
    const counter = (name: string, help: string, labelNames: string[], read: () => Labelled) =>
      new Counter({
        name,
        help,
        labelNames,
        registers,
        collect() {
          setAll(this, read());
        },
      });
    const one = (value: number): Labelled => [{ labels: {}, value }];

    gauge('fleetgw_chargers_configured', 'Chargers in the site config', [], () =>
      one(sources.site.all().length),
    );
    gauge('fleetgw_chargers_connected', 'Chargers with a live OCPP connection', ['protocol'], () =>
      [...sources.chargers.onlineByProtocol()].map(([protocol, n]) => ({
        labels: { protocol },
        value: n,
      })),
    );
    gauge('fleetgw_connectors', 'Configured connectors by last known status', ['status'], () => {
      const counts = new Map<string, number>();
      for (const charger of sources.site.all()) {
        for (const connector of charger.connectors.values()) {
          const status = sources.chargers.connector(charger.id, connector.id).status;
          counts.set(status, (counts.get(status) ?? 0) + 1);
        }
      }
      return [...counts].map(([status, n]) => ({ labels: { status }, value: n }));
    });
    gauge(
      'fleetgw_connectors_out_of_service',
      'Connectors (or whole chargers) an operator set Inoperative',
      [],
      () => one(figures.outOfService()),
    );
    gauge('fleetgw_sessions', 'Sessions by state', ['state'], () => figures.sessionsByState());
    counter(
      'fleetgw_session_starts_total',
      'Debited starts by outcome: accepted, the refund reason, or pending',
      ['outcome'],
      () => figures.startOutcomes(),
    );
    counter(
      'fleetgw_sessions_started_total',
      'Sessions whose transaction started, by origin: app, card or vehicle',
      ['origin'],
      () => figures.startedByOrigin(),
    );
    counter(
      'fleetgw_sessions_stopped_total',
      'Settled sessions by the line that stopped them (station_limit, paid_energy, operator, driver, ev, charger, gateway)',
      ['line'],
      () => figures.stoppedByLine(),
    );
    const settled = () => figures.settled();
    counter('fleetgw_energy_delivered_wh_total', 'Energy delivered in settled sessions', [], () =>
      one(settled().deliveredWh),
    );
    counter(
      'fleetgw_energy_paid_wh_total',
      'Energy delivered within what was paid for (settled sessions)',
      [],
      () => one(settled().paidWh),
    );
    counter(
      'fleetgw_energy_overshoot_wh_total',
      'Energy delivered beyond what was paid for (settled sessions)',
      [],
      () => one(settled().overshootWh),
    );
    counter(
      'fleetgw_money_charged_ngn_total',
      'NGN charged for energy (settled sessions)',
      [],
      () => one(settled().chargedNgn),
    );
    counter(
      'fleetgw_money_returned_ngn_total',
      'NGN given back to drivers: shortfall credits and full refunds',
      ['kind'],
      () => [
        { labels: { kind: 'credit' }, value: settled().creditedNgn },
        { labels: { kind: 'refund' }, value: figures.refundedNgn() },
      ],
    );
    counter(
      'fleetgw_operator_loss_wh_total',
      'Energy delivered that cannot be billed, by reason',
      ['reason'],
      () => figures.operatorLosses()?.wh ?? [],
    );
    counter(
      'fleetgw_operator_loss_ngn_total',
      'The same energy at its session tariff, in NGN',
      ['reason'],
      () => figures.operatorLosses()?.ngn ?? [],
    );
    counter(
      'fleetgw_stop_attempts_total',
      'Stops sent to chargers by step and reply',
      ['step', 'reply'],
      () => figures.stopAttempts()?.attempts ?? [],
    );
    counter(
      'fleetgw_stop_retries_total',
      'Remote stops sent again for the same session',
      [],
      () => {
        const s = figures.stopAttempts();
        return s ? one(s.retries) : [];
      },
    );
    counter(
      'fleetgw_stop_escalations_total',
      'Stop steps beyond the remote stop (zero power, inoperative, unlock)',
      [],
      () => {
        const s = figures.stopAttempts();
        return s ? one(s.escalations) : [];
      },
    );
    counter(
      'fleetgw_field_deviations_total',
      'Messages chargers sent outside the OCPP schemas that the gateway tolerated, by kind',
      ['kind'],
      () => figures.deviations() ?? [],
    );
    gauge('fleetgw_outbox_depth', 'Outbox rows not yet published to the uplink', [], () =>
      one(sources.storage.outboxHealth().depth),
    );
    gauge(
      'fleetgw_outbox_oldest_age_seconds',
      'Age of the oldest unpublished outbox row (0 when none)',
      [],
      () => one(sources.storage.outboxHealth().oldestUnsentAgeSeconds),
    );
    gauge('fleetgw_database_size_bytes', 'SQLite database file plus WAL', [], () =>
      one(sources.storage.databaseSizeBytes()),
    );
  }
}

/**
 * The hook behind GatewayMetrics.observeHttp, on its own so the bench can give a reference server
 * the same per-answer cost. A callback hook: an async one costs a promise on every answer.
 */
export function countHttpAnswers(
  app: FastifyInstance,
  http: HttpSeries,
  startRequests: Counter,
): void {
  app.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url ?? 'unmatched';
    http.observe(request.method, route, reply.statusCode, reply.elapsedTime / 1000);
    if (route === START_ROUTE && request.method === 'POST') {
      const result =
        reply.statusCode === 200
          ? 'started'
          : (answeredErrorCode(reply) ?? `http_${reply.statusCode}`);
      startRequests.inc({ result });
    }
    done();
  });
}
