// Calculated fields are evaluated off the event loop, in a small pool of worker threads, each response's
// within a wall-clock deadline: an expression that passed the save-time cost check can still run long
// over long answers (a comprehension over a 500-option CHECKBOXES answer inside another). A worker past
// its deadline is terminated and replaced; the fields it had not finished store null. A workspace runs
// one evaluation at a time; one that went past the deadline, until an evaluation of it ends in time,
// never takes the last idle worker. So one tenant's slow expressions hold at most one worker (which
// spends its time being replaced) and the others' evaluations find a worker free. An evaluation also has a
// deadline for waiting its turn, so none waits unbounded (a workspace that overran, while the others keep
// every worker busy, would otherwise never get one). Workers that fail before they are ready (the module
// does not load, no memory) are started again with backoff; after several such failures in a row the
// pool stores null at once, without queueing, until a later start succeeds.
import type { JsonValue } from "@bufbuild/protobuf";
import { Worker } from "node:worker_threads";
import type { FormDocument } from "@formsvc/form-document";
import { isInputBlock } from "@formsvc/form-document/block-types";
import { evaluateLogic, hasLogic } from "@formsvc/form-document/logic";
import { calculatedFieldKey } from "@formsvc/form-document/questions";
import { defaultCalculatedFieldTimeoutMs } from "@formsvc/platform/config.ts";
import type { Logger } from "@formsvc/platform/logger.ts";
import { Counter, metrics } from "@formsvc/platform/metrics.ts";
import type { StoredAnswers } from "./answers/stored-answer.ts";
import type { Calculation } from "./calculated-fields.ts";

/** What a worker posts: once loaded, each field's value in order, then the end of the calculation. */
export type WorkerMessage = { ready: true } | { value: JsonValue } | { done: true };

export interface CalculatedFieldsPoolOptions {
  /** Worker threads (default 2). */
  size?: number;
  /** Wall-clock limit of one response's calculated fields, from the moment a worker takes them (default CALCULATED_FIELD_TIMEOUT_MS's). */
  deadlineMs?: number;
  /** Wall-clock limit of waiting for a worker, from the call (default 4 × `deadlineMs`). */
  queueDeadlineMs?: number;
  /** Workers failing before they are ready, in a row, after which evaluations store null at once (default 5). */
  maxStartFailures?: number;
  /** The pause before starting workers again after the first failure; it doubles up to 30 s (default 100 ms). */
  restartDelayMs?: number;
  /** Evaluations waiting per workspace beyond which new ones store null at once (default 16). */
  maxQueuedPerWorkspace?: number;
  logger?: Logger;
  /** Told of each evaluation that stored null for want of time or a worker (to report it on the form). */
  onCutOff?: (cutOff: CutOff) => void;
  /** The workers' module: calculated-fields-worker.ts (tests give one that fails to load). */
  workerUrl?: URL;
}

/** Why an evaluation stored null: past its deadline, past its queue deadline, shed while busy, or no worker. */
export type CutOffReason = "deadline" | "queued" | "busy" | "unavailable";

/** An evaluation that stored null: its form, the field it was cut at (none when it never ran), and why. */
export interface CutOff {
  formId: string;
  field?: string;
  reason: CutOffReason;
}

export interface CalculatedFieldsPool {
  /**
   * The CALCULATED_FIELD answers of `document` over `answers` (one per field, under
   * `calculated:<name>`); fields cut off by the deadline, waiting past the queue deadline, shed while the
   * workspace has too many evaluations waiting or while workers cannot be started, store null. A document
   * without calculated fields takes no worker. Aborting `signal` (the caller went away) rejects with its
   * reason and frees the evaluation's place in the queue.
   */
  evaluate(job: { formId: string; workspaceId: string; document: FormDocument; answers: StoredAnswers; signal?: AbortSignal }): Promise<StoredAnswers>;
  /** Stops the workers; evaluations still waiting store null. */
  close(): Promise<void>;
}

const defaultWorkerUrl = new URL("./calculated-fields-worker.ts", import.meta.url);
/** A runaway allocation ends its worker (ERR_WORKER_OUT_OF_MEMORY), not the service. */
const workerResourceLimits = { maxOldGenerationSizeMb: 128, maxYoungGenerationSizeMb: 32 };
/**
 * Added to a job's queue deadline while no worker is ready yet: workers start lazily (0.1 to 1 s), and
 * the first responses after a start must not lose their values to that wait.
 */
const workerStartAllowanceMs = 5_000;
/** The longest pause between attempts to start workers that keep failing before they are ready. */
const maxRestartDelayMs = 30_000;

function timeoutsCounter(): Counter<"reason"> {
  const name = "calculated_field_timeouts_total";
  return (metrics.getSingleMetric(name) as Counter<"reason"> | undefined) ??
    new Counter({
      name,
      help:
        "Responses whose calculated fields stored null unfinished: deadline (the worker was stopped), queued (waited past the queue deadline), " +
        "busy (too many waiting in the workspace) or unavailable (workers fail to start)",
      labelNames: ["reason"] as const,
      registers: [metrics],
    });
}

/** The calculation a worker makes for `document` over `answers`. */
export function calculationOf(document: FormDocument, answers: StoredAnswers): Calculation {
  // The logic rules' SET actions, over the checked answers (those of questions hidden by logic are null).
  const set = hasLogic(document) ? evaluateLogic(document, Object.fromEntries(Object.entries(answers).map(([key, answer]) => [key, answer.value]))).set : new Map<string, string | number>();
  return {
    fields: (document.calculatedFields ?? []).map((f) => ({
      key: calculatedFieldKey(f.name),
      type: f.type,
      expression: f.expression,
      ...(set.has(f.name) ? { set: set.get(f.name) } : {}),
    })),
    questionKeys: document.blocks.flatMap((block) => (isInputBlock(block) && block.key ? [block.key] : [])),
    answers,
  };
}

/** One CALCULATED_FIELD answer per field of `document`: its value in `values`, null past their end. */
export function calculatedAnswers(document: FormDocument, values: readonly JsonValue[]): StoredAnswers {
  const results: StoredAnswers = {};
  for (const [i, field] of (document.calculatedFields ?? []).entries()) {
    const key = calculatedFieldKey(field.name);
    results[key] = { questionId: key, type: "CALCULATED_FIELD", label: field.name, value: values[i] ?? null };
  }
  return results;
}

interface Job {
  formId: string;
  workspaceId: string;
  document: FormDocument;
  calculation: Calculation;
  values: JsonValue[];
  /** Its queue deadline, cleared once a worker takes it. */
  queueTimer?: NodeJS.Timeout;
  /** Settles the caller's promise (once; later calls do nothing) and releases the job's timer and listener. */
  settle(outcome: { answers: StoredAnswers } | { error: unknown }): void;
}

interface Slot {
  worker: Worker;
  ready: boolean;
  job?: Job;
  timer?: NodeJS.Timeout;
}

export function createCalculatedFieldsPool(options: CalculatedFieldsPoolOptions = {}): CalculatedFieldsPool {
  const size = options.size ?? 2;
  const deadlineMs = options.deadlineMs ?? defaultCalculatedFieldTimeoutMs;
  const queueDeadlineMs = options.queueDeadlineMs ?? 4 * deadlineMs;
  const maxStartFailures = options.maxStartFailures ?? 5;
  const restartDelayMs = options.restartDelayMs ?? 100;
  const maxQueued = options.maxQueuedPerWorkspace ?? 16;
  const logger = options.logger;
  const workerUrl = options.workerUrl ?? defaultWorkerUrl;
  const timeouts = timeoutsCounter();
  /** Counts a cut-off evaluation and tells `onCutOff`. */
  const cutOff = (formId: string, reason: CutOffReason, field?: string) => {
    timeouts.inc({ reason });
    options.onCutOff?.({ formId, field, reason });
  };

  const slots = new Set<Slot>();
  const queue: Job[] = [];
  /** Workspaces with an evaluation on a worker now. */
  const running = new Set<string>();
  /** Workspaces whose last evaluation went past the deadline. */
  const overran = new Set<string>();
  let closed = false;
  /** Workers that failed before they were ready since one last was. */
  let startFailures = 0;
  /** Starting workers again after a failure, once its backoff has passed. */
  let restartTimer: NodeJS.Timeout | undefined;

  /** Workers cannot be started: evaluations store null at once instead of waiting. */
  const unavailable = () => startFailures >= maxStartFailures;

  /** The fields of `job` as far as they were worked out; the rest store null. */
  const settleWithValues = (job: Job) => job.settle({ answers: calculatedAnswers(job.document, job.values) });

  function finish(slot: Slot): void {
    const job = slot.job;
    if (!job) return;
    clearTimeout(slot.timer);
    slot.job = undefined;
    running.delete(job.workspaceId);
    settleWithValues(job);
  }

  /** Ends `slot`'s worker and starts another in its place (unless closed; after a backoff if it never got ready). */
  function replace(slot: Slot): void {
    slots.delete(slot);
    finish(slot);
    void slot.worker.terminate();
    if (slot.ready) fill();
    else startFailed();
    dispatch();
  }

  /** Starts workers up to `size`, unless closed or waiting out a backoff. */
  function fill(): void {
    if (closed || restartTimer) return;
    while (slots.size < size) spawn();
  }

  function startFailed(): void {
    startFailures++;
    if (startFailures === maxStartFailures) {
      logger?.error({ startFailures }, "calculated fields workers keep failing to start: storing null until one starts");
      for (const job of queue.splice(0)) {
        cutOff(job.formId, "unavailable");
        settleWithValues(job);
      }
    }
    if (closed || restartTimer) return;
    const delayMs = Math.min(restartDelayMs * 2 ** (startFailures - 1), maxRestartDelayMs);
    // Unreferenced: a pending evaluation holds the process through its queue deadline instead.
    restartTimer = setTimeout(() => {
      restartTimer = undefined;
      fill();
    }, delayMs).unref();
  }

  function spawn(): void {
    const worker = new Worker(workerUrl, { resourceLimits: workerResourceLimits });
    const slot: Slot = { worker, ready: false };
    slots.add(slot);
    worker.on("message", (message: WorkerMessage) => {
      if ("ready" in message) {
        slot.ready = true;
        if (unavailable()) logger?.info("calculated fields workers start again");
        startFailures = 0;
      } else if ("value" in message) slot.job?.values.push(message.value);
      else {
        if (slot.job) overran.delete(slot.job.workspaceId);
        finish(slot);
      }
      dispatch();
    });
    worker.on("error", (err) => {
      // While unavailable, its one line was logged already.
      if (slot.ready || !unavailable()) logger?.error({ err, formId: slot.job?.formId }, "calculated fields worker failed; replaced");
      replace(slot);
    });
    worker.on("exit", () => {
      if (slots.has(slot)) replace(slot);
    });
    holdProcess();
  }

  /** Workers keep the process alive only while evaluations wait or run. */
  function holdProcess(): void {
    const busy = queue.length > 0 || running.size > 0;
    for (const slot of slots) {
      if (busy) slot.worker.ref();
      else slot.worker.unref();
    }
  }

  /** Gives idle workers the first waiting evaluations they may take. */
  function dispatch(): void {
    try {
      assign();
    } finally {
      holdProcess();
    }
  }

  function assign(): void {
    for (const slot of slots) {
      if (!slot.ready || slot.job) continue;
      let idle = 0;
      for (const other of slots) if (other.ready && !other.job) idle++;
      const index = queue.findIndex((job) => !running.has(job.workspaceId) && (idle > 1 || !overran.has(job.workspaceId)));
      if (index < 0) return;
      const job = queue.splice(index, 1)[0]!;
      clearTimeout(job.queueTimer);
      slot.job = job;
      running.add(job.workspaceId);
      slot.timer = setTimeout(() => {
        const field = job.document.calculatedFields?.[job.values.length]?.name;
        overran.add(job.workspaceId);
        cutOff(job.formId, "deadline", field);
        logger?.warn({ formId: job.formId, workspaceId: job.workspaceId, field, deadlineMs }, "calculated field over its deadline: stored null, worker replaced");
        replace(slot);
      }, deadlineMs);
      slot.worker.postMessage(job.calculation);
    }
  }

  /** Takes `job` out of the queue if it still waits there; whether it did. */
  function dequeue(job: Job): boolean {
    const index = queue.indexOf(job);
    if (index < 0) return false;
    queue.splice(index, 1);
    holdProcess();
    return true;
  }

  return {
    evaluate({ formId, workspaceId, document, answers, signal }) {
      if (!document.calculatedFields?.length) return Promise.resolve({});
      if (signal?.aborted) return Promise.reject(signal.reason);
      if (closed) return Promise.resolve(calculatedAnswers(document, []));
      if (unavailable()) {
        cutOff(formId, "unavailable");
        return Promise.resolve(calculatedAnswers(document, []));
      }
      if (queue.filter((job) => job.workspaceId === workspaceId).length >= maxQueued) {
        cutOff(formId, "busy");
        logger?.warn({ formId, workspaceId, maxQueued }, "calculated fields not evaluated: too many waiting in the workspace; stored null");
        return Promise.resolve(calculatedAnswers(document, []));
      }
      fill();
      return new Promise((resolve, reject) => {
        let settled = false;
        const job: Job = {
          formId,
          workspaceId,
          document,
          calculation: calculationOf(document, answers),
          values: [],
          settle(outcome) {
            if (settled) return;
            settled = true;
            clearTimeout(job.queueTimer);
            signal?.removeEventListener("abort", onAbort);
            if ("error" in outcome) reject(outcome.error);
            else resolve(outcome.answers);
          },
        };
        const waitMs = queueDeadlineMs + ([...slots].some((slot) => slot.ready) ? 0 : workerStartAllowanceMs);
        job.queueTimer = setTimeout(() => {
          if (!dequeue(job)) return;
          cutOff(formId, "queued");
          logger?.warn({ formId, workspaceId, waitMs }, "calculated fields waited past their queue deadline: stored null");
          settleWithValues(job);
        }, waitMs);
        // Gone from the queue at once; one already on a worker runs to its end there, unheard.
        const onAbort = () => {
          dequeue(job);
          job.settle({ error: signal!.reason });
        };
        signal?.addEventListener("abort", onAbort, { once: true });
        queue.push(job);
        dispatch();
      });
    },

    async close() {
      closed = true;
      clearTimeout(restartTimer);
      for (const job of queue.splice(0)) job.settle({ answers: calculatedAnswers(job.document, []) });
      const workers = [...slots].map((slot) => slot.worker);
      for (const slot of [...slots]) {
        slots.delete(slot);
        finish(slot);
      }
      await Promise.all(workers.map((worker) => worker.terminate()));
    },
  };
}
