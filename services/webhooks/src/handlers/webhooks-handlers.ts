import type { MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, type Client, type ConnectRouter, type ServiceImpl } from "@connectrpc/connect";
import { LockMode } from "@mikro-orm/core";
import { upstreamFailure } from "@formsvc/platform/upstream-failure.ts";
import type { AllowedRanges } from "@formsvc/platform/blocked-addresses.ts";
import { defaultWebhookSecretOverlapSeconds } from "@formsvc/platform/config.ts";
import { formResponseEventType } from "@formsvc/platform/events.ts";
import { asCaller, requireCaller } from "@formsvc/platform/caller.ts";
import { qualifiedTable, type MikroORM } from "@formsvc/platform/database.ts";
import { newId } from "@formsvc/platform/ids.ts";
import type { Logger } from "@formsvc/platform/logger.ts";
import { keysetAfter, pageOf, pageRequest } from "@formsvc/platform/paging.ts";
import type { FormsService } from "@formsvc/proto/forms/v1/forms_pb.js";
import { WebhookSchema, WebhooksService } from "@formsvc/proto/webhooks/v1/webhooks_pb.js";
import { WebhookEntity, type Webhook } from "../entities/index.ts";
import {
  disabledByOwner,
  generateSecret,
  maskSecret,
  maxWebhooksPerForm,
  parseEventTypes,
  parseFormat,
  parseHeaders,
  parseSecret,
  parseSubscriber,
  parseWebhookUrl,
} from "../webhook-rules.ts";

export interface WebhooksHandlersDeps {
  orm: MikroORM;
  /**
   * Forms, asked on behalf of the caller whether the form is theirs (GetForm answers NOT_FOUND for
   * missing, foreign and trashed forms alike).
   */
  forms: Client<typeof FormsService>;
  /**
   * WEBHOOK_ALLOW_PRIVATE_URLS: accept URLs whose host is a literal private or loopback address (or
   * localhost). Off by default.
   */
  allowPrivateUrls?: boolean;
  /** WEBHOOK_ALLOWED_CIDRS: non-public ranges whose literal addresses are accepted all the same. */
  allowedCidrs?: AllowedRanges;
  /** WEBHOOK_SECRET_OVERLAP_SECONDS in ms: how long a rotated-out secret keeps signing beside the new one; 24 h. */
  secretOverlapMs?: number;
  now?: () => Date;
  /** Where failures of forms are logged (they reach the caller only as UNAVAILABLE). Never given secrets. */
  logger?: Logger;
}

const webhookNotFound = () => new ConnectError("webhook not found", Code.NotFound);
/** A form id no form has (ids are letters and digits). */
const noSuchForm = "~";
const formIdRequired = () => new ConnectError("formId is required", Code.InvalidArgument);

/** A `webhooks` row as the driver returns it. */
interface WebhookRow {
  id: string;
  form_id: string;
  url: string;
  secret: string | null;
  headers: Record<string, string> | string;
  event_types: string[] | string;
  format: string;
  enabled: boolean;
  disabled_reason: string | null;
  disabled_at: Date | string | null;
  previous_secret: string | null;
  previous_secret_expires_at: Date | string | null;
  subscriber: string | null;
  subscribed_by_key: string | null;
  subscribed_by_user: string | null;
  created_at: Date | string;
  updated_at: Date | string;
}

const dateOrNull = (value: Date | string | null) => (value === null ? null : new Date(value));

function webhookFromRow(row: WebhookRow): Webhook {
  return {
    id: row.id,
    formId: row.form_id,
    url: row.url,
    secret: row.secret,
    headers: typeof row.headers === "string" ? JSON.parse(row.headers) : row.headers,
    eventTypes: typeof row.event_types === "string" ? JSON.parse(row.event_types) : row.event_types,
    format: row.format,
    enabled: row.enabled,
    disabledReason: row.disabled_reason,
    disabledAt: dateOrNull(row.disabled_at),
    previousSecret: row.previous_secret,
    previousSecretExpiresAt: dateOrNull(row.previous_secret_expires_at),
    subscriber: row.subscriber,
    subscribedByKey: row.subscribed_by_key,
    subscribedByUser: row.subscribed_by_user,
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
  } as Webhook;
}

/**
 * The Webhook message; an empty secret when there is none. The secret is masked for callers, except
 * "shown" whole to its creator (creation, rotation); "delivery" gets it whole with a rotation's previous
 * secret until that expires, to sign with both.
 */
function webhookMessage(hook: Webhook, secret: "masked" | "shown" | "delivery" = "masked", at = new Date()): MessageInitShape<typeof WebhookSchema> {
  const previousValid = hook.previousSecret && hook.previousSecretExpiresAt && hook.previousSecretExpiresAt > at;
  return {
    id: hook.id,
    formId: hook.formId,
    url: hook.url,
    secret: secret === "masked" ? maskSecret(hook.secret) : (hook.secret ?? ""),
    headers: { ...hook.headers },
    eventTypes: [...hook.eventTypes],
    subscriber: hook.subscriber ?? "",
    format: hook.format,
    enabled: hook.enabled,
    disabledReason: hook.disabledReason ?? "",
    disabledAt: hook.disabledAt ? timestampFromDate(hook.disabledAt) : undefined,
    previousSecret: previousValid && secret === "delivery" ? hook.previousSecret! : "",
    previousSecretExpiresAt: previousValid ? timestampFromDate(hook.previousSecretExpiresAt!) : undefined,
    createdAt: timestampFromDate(hook.createdAt),
    updatedAt: timestampFromDate(hook.updatedAt),
  };
}

function sameHeaders(a: Record<string, string>, b: Record<string, string>): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => Object.hasOwn(b, k) && b[k] === a[k]);
}

export function createWebhooksHandlers(deps: WebhooksHandlersDeps): ServiceImpl<typeof WebhooksService> {
  const { orm, forms } = deps;
  const allowPrivate = deps.allowPrivateUrls ?? false;
  const now = deps.now ?? (() => new Date());
  const webhooksTable = qualifiedTable(orm, WebhookEntity);

  /**
   * Disables the webhook for delivery's `reason`, in one statement, so a webhook disabled meanwhile (by its
   * owner or another replica) keeps the first reason. NOT_FOUND once deleted.
   */
  async function disable(id: string, reason: string): Promise<Webhook> {
    if (!id) throw webhookNotFound();
    const connection = orm.em.getConnection();
    const [disabled] = await connection.execute<WebhookRow[]>(
      `update ${webhooksTable} set "enabled" = false, "disabled_reason" = ?, "disabled_at" = ?, "updated_at" = ?
       where "id" = ? and "enabled" returning *`,
      [reason || "disabled by delivery", now(), now(), id],
      "all",
    );
    const [row] = disabled ? [disabled] : await connection.execute<WebhookRow[]>(`select * from ${webhooksTable} where "id" = ?`, [id], "all");
    if (!row) throw webhookNotFound();
    return webhookFromRow(row);
  }

  /**
   * Checks with forms, as the caller, that the form is theirs. Its NOT_FOUND becomes ours with
   * `notFoundMessage`; anything else is UNAVAILABLE without forms' details (kept as the cause, logged).
   */
  async function requireForm(formId: string, caller: string, notFoundMessage: string): Promise<void> {
    let found: boolean;
    try {
      const res = await forms.getForm({ id: formId }, asCaller(caller));
      found = res.form?.id === formId;
    } catch (err) {
      upstreamFailure("forms", err, { notFoundMessage, passThrough: [], logger: deps.logger });
    }
    if (!found) throw new ConnectError(notFoundMessage, Code.NotFound);
  }

  /** The webhook, when it exists and its form is the caller's; the same NOT_FOUND otherwise. */
  async function callerWebhook(id: string, caller: string): Promise<Webhook> {
    const hook = id ? await orm.em.fork().findOne(WebhookEntity, { id }) : null;
    // Forms is asked about a missing webhook's form too, so the time taken does not tell a missing webhook from
    // another tenant's (the probe of issue 34 saw 30-35 ms against 58-71 ms).
    await requireForm(hook?.formId ?? noSuchForm, caller, "webhook not found");
    if (!hook) throw webhookNotFound();
    return hook;
  }

  return {
    async createWebhook(req, ctx) {
      const caller = requireCaller(ctx);
      if (!req.formId) throw formIdRequired();
      const url = parseWebhookUrl(req.url, allowPrivate, deps.allowedCidrs);
      const secret = parseSecret(req.secret) ?? generateSecret();
      const headers = parseHeaders(req.headers);
      const eventTypes = parseEventTypes(req.eventTypes, "create");
      const subscriber = parseSubscriber(req.subscriber);
      const format = parseFormat(req.format);
      await requireForm(req.formId, caller, "form not found");

      const { hook, existing } = await orm.em.fork().transactional(async (em) => {
        // One creation at a time per form, so concurrent ones cannot pass the limit together, nor one
        // subscriber's repeated subscriptions make two webhooks.
        await em.execute("select pg_advisory_xact_lock(hashtext(?))", [`formsvc:webhooks:form:${req.formId}`]);
        if (subscriber) {
          const found = await em.findOne(WebhookEntity, { formId: req.formId, url, subscriber }, { orderBy: { createdAt: "asc" } });
          if (found) return { hook: found, existing: true };
        }
        const count = await em.count(WebhookEntity, { formId: req.formId });
        if (count >= maxWebhooksPerForm) {
          throw new ConnectError(`a form can have at most ${maxWebhooksPerForm} webhooks`, Code.FailedPrecondition);
        }
        const at = now();
        const enabled = req.enabled ?? true;
        // Only a subscriber's webhook goes with the key that made it; one made by hand is its person's.
        const byKey = subscriber && req.apiKeyId ? req.apiKeyId : null;
        const hook = em.create(WebhookEntity, {
          id: newId(),
          formId: req.formId,
          url,
          secret,
          headers,
          eventTypes,
          format,
          enabled,
          disabledReason: enabled ? null : disabledByOwner,
          disabledAt: enabled ? null : at,
          previousSecret: null,
          previousSecretExpiresAt: null,
          subscriber,
          subscribedByKey: byKey,
          subscribedByUser: byKey ? caller : null,
          createdAt: at,
          updatedAt: at,
        });
        return { hook, existing: false };
      });
      // An existing webhook's secret was shown at its creation only; rotate it to see a new one whole.
      return { webhook: webhookMessage(hook, existing ? "masked" : "shown"), existing };
    },

    async listWebhooks(req, ctx) {
      const caller = requireCaller(ctx);
      if (!req.formId) throw formIdRequired();
      const window = pageRequest(req);
      await requireForm(req.formId, caller, "form not found");
      const rows = await orm.em.fork().find(
        WebhookEntity,
        { $and: [{ formId: req.formId }, ...(window.after ? [keysetAfter(webhooksTable, "created_at", "desc", window.after)] : [])] },
        { orderBy: [{ createdAt: "desc" }, { id: "desc" }], limit: window.fetch, offset: window.offset },
      );
      const page = pageOf(rows, window.limit, (hook) => hook.createdAt);
      return { webhooks: page.items.map((hook) => webhookMessage(hook)), hasMore: page.hasMore, nextCursor: page.nextCursor };
    },

    async getWebhook(req, ctx) {
      const hook = await callerWebhook(req.id, requireCaller(ctx));
      return { webhook: webhookMessage(hook) };
    },

    async updateWebhook(req, ctx) {
      const caller = requireCaller(ctx);
      const url = req.url === undefined ? undefined : parseWebhookUrl(req.url, allowPrivate, deps.allowedCidrs);
      const secret = req.secret === undefined ? undefined : parseSecret(req.secret);
      const headers = req.headers === undefined ? undefined : parseHeaders(req.headers.values);
      const eventTypes = req.eventTypes === undefined ? undefined : parseEventTypes(req.eventTypes.values, "update");
      const format = req.format === undefined ? undefined : parseFormat(req.format);
      await callerWebhook(req.id, caller);

      const hook = await orm.em.fork().transactional(async (em) => {
        const hook = await em.findOne(WebhookEntity, { id: req.id }, { lockMode: LockMode.PESSIMISTIC_WRITE });
        if (!hook) throw webhookNotFound();
        let changed = false;
        if (url !== undefined && url !== hook.url) {
          hook.url = url;
          changed = true;
        }
        if (secret !== undefined && secret !== hook.secret) {
          // A secret set by hand replaces the current one at once: a rotation's previous secret ends too.
          hook.secret = secret;
          hook.previousSecret = null;
          hook.previousSecretExpiresAt = null;
          changed = true;
        }
        if (headers !== undefined && !sameHeaders(headers, hook.headers)) {
          hook.headers = headers;
          changed = true;
        }
        if (eventTypes !== undefined && eventTypes.join() !== hook.eventTypes.join()) {
          hook.eventTypes = eventTypes;
          changed = true;
        }
        if (format !== undefined && format !== hook.format) {
          hook.format = format;
          changed = true;
        }
        const at = now();
        if (req.enabled !== undefined && req.enabled !== hook.enabled) {
          hook.enabled = req.enabled;
          // Enabled again: the reason it was disabled (by its owner, a 410, days of failures) is gone.
          hook.disabledReason = req.enabled ? null : disabledByOwner;
          hook.disabledAt = req.enabled ? null : at;
          changed = true;
        }
        // An update that changes nothing keeps updated_at.
        if (changed) hook.updatedAt = at;
        return hook;
      });
      return { webhook: webhookMessage(hook) };
    },

    async deleteFormWebhooks(req) {
      // Internal (forms' PurgeForm checks the caller, the role and the Trash).
      if (!req.formId) throw new ConnectError("formId: is required", Code.InvalidArgument);
      const deleted = await orm.em.fork().nativeDelete(WebhookEntity, { formId: req.formId });
      return { deleted: BigInt(deleted) };
    },

    async rotateSecret(req, ctx) {
      await callerWebhook(req.id, requireCaller(ctx));
      const hook = await orm.em.fork().transactional(async (em) => {
        const hook = await em.findOne(WebhookEntity, { id: req.id }, { lockMode: LockMode.PESSIMISTIC_WRITE });
        if (!hook) throw webhookNotFound();
        const at = now();
        // The secret being replaced keeps signing for the overlap; a webhook without one gets its first.
        hook.previousSecret = hook.secret;
        hook.previousSecretExpiresAt = hook.secret ? new Date(at.getTime() + (deps.secretOverlapMs ?? defaultWebhookSecretOverlapSeconds * 1000)) : null;
        hook.secret = generateSecret();
        hook.updatedAt = at;
        return hook;
      });
      return { webhook: webhookMessage(hook, "shown", now()) };
    },

    async deleteWebhook(req, ctx) {
      await callerWebhook(req.id, requireCaller(ctx));
      // Hard delete: delivery stops the webhook's pending deliveries once GetWebhookForDelivery answers NOT_FOUND.
      const deleted = await orm.em.fork().nativeDelete(WebhookEntity, { id: req.id });
      if (deleted === 0) throw webhookNotFound();
      return {};
    },

    // The two calls of delivery run once per event and once per attempt: one read-only query each,
    // without the ORM's unit of work.

    async listEnabledWebhooks(req) {
      // Internal (delivery): no caller; secrets and headers included; those subscribed to the event type.
      // Oldest first, a stable fan-out order.
      if (!req.formId) throw formIdRequired();
      const eventType = req.eventType || formResponseEventType;
      const rows = await orm.em
        .getConnection()
        .execute<WebhookRow[]>(
          `select * from ${webhooksTable} where "form_id" = ? and "enabled" and "event_types" @> ?::jsonb order by "created_at", "id"`,
          [req.formId, JSON.stringify([eventType])],
          "all",
        );
      return { webhooks: rows.map((row) => webhookMessage(webhookFromRow(row), "delivery", now())) };
    },

    async getWebhookForDelivery(req) {
      // Internal (delivery): no caller; the webhook as it is now, disabled or not; NOT_FOUND once deleted.
      const [row] = req.id ? await orm.em.getConnection().execute<WebhookRow[]>(`select * from ${webhooksTable} where "id" = ?`, [req.id], "all") : [];
      if (!row) throw webhookNotFound();
      return { webhook: webhookMessage(webhookFromRow(row), "delivery", now()) };
    },

    async disableWebhook(req) {
      return { webhook: webhookMessage(await disable(req.id, req.reason)) };
    },

    async webhookGone(req) {
      // Internal (delivery): a tool's subscription that its receiver calls gone is over (the tool deleted
      // its workflow without unsubscribing); a webhook made by hand is only disabled, for its owner to see.
      if (!req.id) throw webhookNotFound();
      const gone = await orm.em
        .getConnection()
        .execute<{ form_id: string }[]>(`delete from ${webhooksTable} where "id" = ? and "subscriber" is not null returning "form_id"`, [req.id], "all");
      if (gone.length > 0) return { deleted: true, formId: gone[0].form_id };
      const disabled = await disable(req.id, req.reason);
      return { deleted: false, formId: disabled.formId };
    },
  };
}

export function routes(router: ConnectRouter, handlers: ServiceImpl<typeof WebhooksService>): void {
  router.service(WebhooksService, handlers);
}
