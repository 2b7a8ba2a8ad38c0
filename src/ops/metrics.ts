/**
 * Prometheus metrics for one gateway, on its own registry (so two gateways in one process, as in
 * tests, never share counters). It observes the dispatcher; gauges read live values on scrape.
 * Model usage goes both to counters and to the in-memory ledger behind `GET /api/usage`.
 */
import { Counter, Gauge, Histogram, Registry } from "prom-client";
import type { DispatcherObserver } from "../core/dispatcher.js";
import type { ModelUsage } from "../harness/usage.js";
import { type UsageLabels, UsageLedger } from "./usage.js";

export interface LiveValues {
  queueDepth(): number;
  activeRuns(): number;
}

export class GatewayMetrics implements DispatcherObserver {
  readonly registry = new Registry();
  /** Usage since the gateway started, for `GET /api/usage`. */
  readonly usageLedger = new UsageLedger();
  private readonly inboundTotal = new Counter({
    name: "antler_inbound_messages_total",
    help: "Messages received from users, by channel (after dedupe).",
    labelNames: ["channel"],
    registers: [this.registry],
  });
  private readonly runsTotal = new Counter({
    name: "antler_runs_total",
    help: "Agent runs finished, by channel and outcome (done, clarification, error).",
    labelNames: ["channel", "outcome"],
    registers: [this.registry],
  });
  private readonly runSeconds = new Histogram({
    name: "antler_run_duration_seconds",
    help: "Duration of agent runs, from start to the last message delivered.",
    labelNames: ["channel"],
    buckets: [0.25, 0.5, 1, 2, 5, 10, 30, 60, 120, 300],
    registers: [this.registry],
  });
  private readonly firstTextSeconds = new Histogram({
    name: "antler_first_visible_text_seconds",
    help: "Time from run start to the first reply text visible in the chat.",
    labelNames: ["channel"],
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30],
    registers: [this.registry],
  });
  private readonly apiCalls = new Counter({
    name: "antler_platform_api_calls_total",
    help: "Successful calls to a platform API (send, edit, stream), by channel and kind.",
    labelNames: ["channel", "kind"],
    registers: [this.registry],
  });
  private readonly apiErrors = new Counter({
    name: "antler_platform_api_errors_total",
    help: "Failed platform API calls, by channel and error code.",
    labelNames: ["channel", "code"],
    registers: [this.registry],
  });
  private readonly modelTokens = new Counter({
    name: "antler_model_tokens_total",
    help: "Tokens the model reported, by tenant, agent, model, kind (chat, title, summarization, subagent, memory) and type (input, output).",
    labelNames: ["tenant", "agent", "model", "kind", "type"],
    registers: [this.registry],
  });
  private readonly modelCalls = new Counter({
    name: "antler_model_calls_total",
    help: "Model calls that reported usage, by tenant, agent, model and kind.",
    labelNames: ["tenant", "agent", "model", "kind"],
    registers: [this.registry],
  });
  private readonly rateLimitedTotal = new Counter({
    name: "antler_platform_rate_limited_total",
    help: "429 / rate-limit answers from platforms, by channel.",
    labelNames: ["channel"],
    registers: [this.registry],
  });

  private readonly outboxDeliveries = new Counter({
    name: "antler_outbox_deliveries_total",
    help: "Outbox attempts that ended, by kind (send, run) and result (sent, retry, failed).",
    labelNames: ["kind", "result"],
    registers: [this.registry],
  });
  private readonly outboxLag = new Histogram({
    name: "antler_outbox_delivery_lag_seconds",
    help: "From an outbox entry's acceptance (or its schedule's due time) to its delivery.",
    labelNames: ["kind"],
    buckets: [0.1, 0.5, 1, 2, 5, 15, 60, 300, 1800],
    registers: [this.registry],
  });
  private readonly scheduleFires = new Counter({
    name: "antler_schedule_fires_total",
    help: "Schedule due times recorded, by result (fired, missed, skipped).",
    labelNames: ["result"],
    registers: [this.registry],
  });

  constructor(live: LiveValues) {
    new Gauge({
      name: "antler_queue_depth",
      help: "Messages waiting in conversation queues.",
      registers: [this.registry],
      collect() {
        this.set(live.queueDepth());
      },
    });
    new Gauge({
      name: "antler_active_runs",
      help: "Agent runs in progress.",
      registers: [this.registry],
      collect() {
        this.set(live.activeRuns());
      },
    });
  }

  /** An outbox attempt ended (see core/outbox/worker.ts). */
  delivery(kind: "send" | "run", result: "sent" | "failed" | "retry", lagSeconds: number): void {
    this.outboxDeliveries.inc({ kind, result });
    if (result === "sent") this.outboxLag.observe({ kind }, lagSeconds);
  }

  /** A schedule's due time was recorded. */
  scheduleFire(result: string): void {
    this.scheduleFires.inc({ result });
  }

  inbound(channel: string): void {
    this.inboundTotal.inc({ channel });
  }

  runFinished(channel: string, outcome: string, seconds: number): void {
    this.runsTotal.inc({ channel, outcome });
    this.runSeconds.observe({ channel }, seconds);
  }

  firstVisible(channel: string, seconds: number): void {
    this.firstTextSeconds.observe({ channel }, seconds);
  }

  rateLimited(channel: string): void {
    this.rateLimitedTotal.inc({ channel });
  }

  apiCall(channel: string, kind: string): void {
    this.apiCalls.inc({ channel, kind });
  }

  apiError(channel: string, code: string): void {
    this.apiErrors.inc({ channel, code });
  }

  /** Counts one model call's usage, made for `labels`' tenant and agent. */
  usage(labels: UsageLabels, usage: ModelUsage): void {
    const call = { tenant: labels.tenant, agent: labels.agent, model: usage.model, kind: usage.kind };
    this.modelCalls.inc(call);
    this.modelTokens.inc({ ...call, type: "input" }, usage.inputTokens);
    this.modelTokens.inc({ ...call, type: "output" }, usage.outputTokens);
    this.usageLedger.record(labels, usage);
  }
}
