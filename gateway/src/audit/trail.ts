// The gateway's side of the audit log: events captured as requests succeed, sent to identity
// (RecordAuditEvents) in batches from an in-process queue. Recording never holds up or fails the request
// whose change is committed: a failed call is logged (a count and the error's code, never an event) and tried
// again with a growing pause, the queue bounded; events dropped past the bound are logged as an error.
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, type Client } from "@connectrpc/connect";
import { asCaller } from "@formsvc/platform/caller.ts";
import { newId } from "@formsvc/platform/ids.ts";
import type { Logger } from "@formsvc/platform/logger.ts";
import type { FormsService } from "@formsvc/proto/forms/v1/forms_pb.js";
import { AuditEventSchema, type AuditEvent, type IdentityService } from "@formsvc/proto/identity/v1/identity_pb.js";
import type { WebhooksService } from "@formsvc/proto/webhooks/v1/webhooks_pb.js";
import type { Request, Response } from "express";
import { auditedRoutes, select, sessionActions, type AuditAction } from "./actions.ts";
import { changesOf, type AuditChange } from "./changes.ts";

export interface AuditActor {
  /** `user` (the app), `api_key` (the API), `system`, `anonymous` (a failed sign-in). */
  type: "user" | "api_key" | "system" | "anonymous";
  userId?: string;
  apiKeyId?: string;
}

/** Whose log an event goes to: a known workspace, the workspace of a form or webhook (looked up), or its person's. */
export type AuditScope = { workspaceId: string } | { formId: string } | { webhookId: string } | { personal: true };

/** Who made a request, from where. */
export interface AuditWho {
  actor: AuditActor;
  address: string;
  requestId: string;
}

/** One event as a request captured it. */
export interface CapturedEvent extends AuditWho {
  action: string;
  targetType: string;
  targetId: string;
  changes: AuditChange[];
  scope: AuditScope;
  /** A failed sign-in's email, which identity resolves to its account and does not keep. */
  subjectEmail?: string;
}

interface Queued extends CapturedEvent {
  id: string;
  occurredAt: Date;
}

export interface AuditTrailDeps {
  identity: Pick<Client<typeof IdentityService>, "recordAuditEvents">;
  forms: Pick<Client<typeof FormsService>, "getFormVersion">;
  webhooks: Pick<Client<typeof WebhooksService>, "getWebhook">;
  logger: Logger;
  /** The most events held while identity does not take them (default 10,000). */
  maxQueued?: number;
  /** The first pause after a failed call (default 1 s), doubling up to `maxRetryMs` (default 30 s). */
  retryMs?: number;
  maxRetryMs?: number;
}

/** The most events one call carries (identity's own limit). */
const batchSize = 500;
/** Records whose owner never changes (a form's workspace, a webhook's form), held at most this many each. */
const maxHeld = 10_000;
/** What a lookup answers for a record that is gone: the event is recorded without a workspace. */
const gone = new Set([Code.NotFound, Code.PermissionDenied, Code.InvalidArgument]);

export class AuditTrail {
  readonly #deps: AuditTrailDeps;
  #queue: Queued[] = [];
  #flushing: Promise<void> | undefined;
  #timer: NodeJS.Timeout | undefined;
  #failures = 0;
  readonly #formWorkspaces = new Map<string, string>();
  readonly #webhookForms = new Map<string, string>();

  constructor(deps: AuditTrailDeps) {
    this.#deps = deps;
  }

  /** Events waiting to be sent. */
  get queued(): number {
    return this.#queue.length;
  }

  /** Queues an event; it is sent at once, together with the others that come meanwhile. */
  record(event: CapturedEvent): void {
    this.#queue.push({ ...event, id: newId(), occurredAt: new Date() });
    const max = this.#deps.maxQueued ?? 10_000;
    if (this.#queue.length > max) {
      const dropped = this.#queue.splice(0, this.#queue.length - max).length;
      this.#deps.logger.error({ dropped, queued: max }, "audit events dropped: identity has not taken them for too long");
    }
    if (!this.#failures) this.#schedule(0);
  }

  /** Sends everything queued; resolves when the queue is empty or a call failed (a retry is then scheduled). */
  flush(): Promise<void> {
    this.#flushing ??= this.#send().finally(() => {
      this.#flushing = undefined;
    });
    return this.#flushing;
  }

  /** At stop: tries for at most `withinMs` to send what is queued, and logs what could not be. */
  async stop(withinMs = 5_000): Promise<void> {
    const deadline = Date.now() + withinMs;
    this.#unschedule();
    while (this.#queue.length && Date.now() < deadline) {
      await this.flush();
      if (this.#queue.length) await new Promise((resolve) => setTimeout(resolve, Math.min(500, Math.max(0, deadline - Date.now()))));
    }
    this.#unschedule();
    if (this.#queue.length) this.#deps.logger.error({ lost: this.#queue.length }, "audit events not recorded before the gateway stopped");
  }

  /** The workspace `scope` names, looked up now; the scope as it was when the lookup failed (it is tried again when sent). */
  async settle(scope: AuditScope, actor: AuditActor): Promise<AuditScope> {
    try {
      const workspaceId = await this.#workspaceOf(scope, actor);
      return workspaceId === undefined ? scope : { workspaceId };
    } catch {
      return scope;
    }
  }

  #unschedule(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #schedule(ms: number): void {
    if (this.#timer) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      void this.flush();
    }, ms);
    this.#timer.unref();
  }

  async #send(): Promise<void> {
    while (this.#queue.length) {
      const batch = this.#queue.slice(0, batchSize);
      try {
        const events = await Promise.all(batch.map((event) => this.#message(event)));
        await this.#deps.identity.recordAuditEvents({ events });
        this.#failures = 0;
      } catch (err) {
        const { code, message } = ConnectError.from(err);
        if (code === Code.InvalidArgument) {
          // Identity will never take this batch as it is: dropped, loudly, rather than holding back every later event.
          this.#deps.logger.error({ dropped: batch.length, code: Code[code], message }, "audit events refused by identity and dropped");
        } else {
          const pause = Math.min((this.#deps.retryMs ?? 1_000) * 2 ** this.#failures++, this.#deps.maxRetryMs ?? 30_000);
          this.#deps.logger.warn({ events: this.#queue.length, code: Code[code], retryInMs: pause }, "recording audit events failed; trying again");
          this.#schedule(pause);
          return;
        }
      }
      // The queue may have lost its oldest meanwhile (its bound): remove exactly the events sent.
      const sent = new Set(batch);
      this.#queue = this.#queue.filter((event) => !sent.has(event));
    }
  }

  async #message(event: Queued): Promise<AuditEvent> {
    const scope = event.scope;
    const workspaceId = "personal" in scope ? "" : ((await this.#workspaceOf(scope, event.actor)) ?? "");
    return create(AuditEventSchema, {
      id: event.id,
      occurredAt: timestampFromDate(event.occurredAt),
      workspaceId,
      personal: "personal" in scope,
      actor: { type: event.actor.type, userId: event.actor.userId ?? "", apiKeyId: event.actor.apiKeyId ?? "" },
      address: event.address,
      action: event.action,
      targetType: event.targetType,
      targetId: event.targetId,
      changes: event.changes,
      requestId: event.requestId,
      subjectEmail: event.subjectEmail ?? "",
    });
  }

  /**
   * The workspace of a scope: as named, or of its form (forms' internal GetFormVersion: any status, the Trash
   * too; every form has a version 1), of its webhook's form. "" for a record that is gone; undefined for a
   * personal scope. A failure to ask throws, so the batch is tried again.
   */
  async #workspaceOf(scope: AuditScope, actor: AuditActor): Promise<string | undefined> {
    if ("personal" in scope) return undefined;
    if ("workspaceId" in scope) return scope.workspaceId;
    const formId = "formId" in scope ? scope.formId : await this.#held(this.#webhookForms, scope.webhookId, async () =>
      (await this.#deps.webhooks.getWebhook({ id: scope.webhookId }, asCaller(actor.userId))).webhook?.formId ?? "");
    if (!formId) return "";
    return this.#held(this.#formWorkspaces, formId, async () => (await this.#deps.forms.getFormVersion({ formId, version: 1 })).workspaceId);
  }

  async #held(map: Map<string, string>, id: string, ask: () => Promise<string>): Promise<string> {
    const known = map.get(id);
    if (known !== undefined) return known;
    let found: string;
    try {
      found = await ask();
    } catch (err) {
      if (gone.has(ConnectError.from(err).code)) return "";
      throw err;
    }
    if (map.size >= maxHeld) map.clear();
    map.set(id, found);
    return found;
  }
}

/** The scope an entry names, from what the request had and (once answered) answered. */
export function scopeOf(entry: AuditAction, sources: Parameters<typeof select>[1]): AuditScope {
  const { scope } = entry;
  if (scope === "person") return { personal: true };
  if ("workspace" in scope) return { workspaceId: select(scope.workspace, sources) ?? "" };
  if ("form" in scope) return { formId: select(scope.form, sources) ?? "" };
  return { webhookId: select(scope.webhook, sources) ?? "" };
}

/**
 * The audit side of one request of the table's `entry`: looks up what the change would delete first, then
 * gives the function that records the answer when it is a 2xx. Recording never throws into the request.
 */
/** Records an answered request's event when the answer is a 2xx. */
export type AnswerRecorder = (reply: { status: number; body: unknown }) => void;

/** What a request had, as the handler took it. */
export interface RequestParts {
  params?: unknown;
  body?: unknown;
  query?: unknown;
  userId?: string;
}

export async function auditRequest(trail: AuditTrail, entry: AuditAction, input: RequestParts, who: AuditWho): Promise<AnswerRecorder> {
  const early = entry.lookUpFirst ? await trail.settle(scopeOf(entry, input), who.actor) : undefined;
  return (reply) => {
    if (reply.status < 200 || reply.status > 299) return;
    const sources = { ...input, answer: reply.body };
    const part = entry.changes === "none" ? undefined : entry.changes === "query" ? input.query : input.body;
    trail.record({
      ...who,
      action: entry.action,
      targetType: entry.target,
      targetId: select(entry.targetId, sources) ?? "",
      changes: [...Object.entries(entry.fixed ?? {}).map(([field, value]) => ({ field, value })), ...changesOf(part)],
      scope: early ?? scopeOf(entry, sources),
    });
  };
}

/** A door's audit of one request of the route keyed `key` (`auditRequest`); nothing for a route the table does not name. */
/**
 * Records an event of an app route outside the route table (a sign-in, joining by a link, a second factor): where
 * from and which request, read off the request.
 */
export function recordAppEvent(
  audit: AuditTrail | undefined,
  req: Request,
  res: Response,
  event: Omit<CapturedEvent, "address" | "requestId" | "changes"> & { changes?: AuditChange[] },
): void {
  audit?.record({ changes: [], ...event, address: req.ip ?? "", requestId: res.locals.requestId ?? "" });
}

/** A person's sign-in (by password, second factor or provider), for each of their workspaces' logs. */
export const signInEvent = (userId: string) =>
  ({ actor: { type: "user", userId }, action: sessionActions.signIn, targetType: "user", targetId: userId, scope: { personal: true } }) as const;

export function auditAtDoor(trail: AuditTrail | undefined, key: string, input: RequestParts, who: AuditWho): Promise<AnswerRecorder> | AnswerRecorder {
  const entry = auditedRoutes[key];
  return trail && entry ? auditRequest(trail, entry, input, who) : unaudited;
}

const unaudited: AnswerRecorder = () => {};
