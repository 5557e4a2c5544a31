import type { MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, type Client, type ConnectRouter, type ServiceImpl } from "@connectrpc/connect";
import { LockMode } from "@mikro-orm/core";
import { upstreamFailure } from "@formsvc/platform/upstream-failure.ts";
import { asCaller, requireCaller } from "@formsvc/platform/caller.ts";
import { qualifiedTable, type MikroORM } from "@formsvc/platform/database.ts";
import { newId } from "@formsvc/platform/ids.ts";
import type { Logger } from "@formsvc/platform/logger.ts";
import { pageOf, pageWindow } from "@formsvc/platform/paging.ts";
import type { FormsService } from "@formsvc/proto/forms/v1/forms_pb.js";
import { WebhookSchema, WebhooksService } from "@formsvc/proto/webhooks/v1/webhooks_pb.js";
import { WebhookEntity, type Webhook } from "../entities/index.ts";
import { maxWebhooksPerForm, parseHeaders, parseSecret, parseWebhookUrl } from "../webhook-rules.ts";

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
  now?: () => Date;
  /** Where failures of forms are logged (they reach the caller only as UNAVAILABLE). Never given secrets. */
  logger?: Logger;
}

const webhookNotFound = () => new ConnectError("webhook not found", Code.NotFound);
const formIdRequired = () => new ConnectError("formId is required", Code.InvalidArgument);

/** A `webhooks` row as the driver returns it. */
interface WebhookRow {
  id: string;
  form_id: string;
  url: string;
  secret: string | null;
  headers: Record<string, string> | string;
  enabled: boolean;
  created_at: Date | string;
  updated_at: Date | string;
}

function webhookFromRow(row: WebhookRow): Webhook {
  return {
    id: row.id,
    formId: row.form_id,
    url: row.url,
    secret: row.secret,
    headers: typeof row.headers === "string" ? JSON.parse(row.headers) : row.headers,
    enabled: row.enabled,
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
  } as Webhook;
}

/** The Webhook message; an empty secret when there is none. */
function webhookMessage(hook: Webhook): MessageInitShape<typeof WebhookSchema> {
  return {
    id: hook.id,
    formId: hook.formId,
    url: hook.url,
    secret: hook.secret ?? "",
    headers: { ...hook.headers },
    enabled: hook.enabled,
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
    if (!hook) throw webhookNotFound();
    await requireForm(hook.formId, caller, "webhook not found");
    return hook;
  }

  return {
    async createWebhook(req, ctx) {
      const caller = requireCaller(ctx);
      if (!req.formId) throw formIdRequired();
      const url = parseWebhookUrl(req.url, allowPrivate);
      const secret = parseSecret(req.secret);
      const headers = parseHeaders(req.headers);
      await requireForm(req.formId, caller, "form not found");

      const hook = await orm.em.fork().transactional(async (em) => {
        // One creation at a time per form, so concurrent ones cannot pass the limit together.
        await em.execute("select pg_advisory_xact_lock(hashtext(?))", [`formsvc:webhooks:form:${req.formId}`]);
        const count = await em.count(WebhookEntity, { formId: req.formId });
        if (count >= maxWebhooksPerForm) {
          throw new ConnectError(`a form can have at most ${maxWebhooksPerForm} webhooks`, Code.FailedPrecondition);
        }
        const at = now();
        return em.create(WebhookEntity, {
          id: newId(),
          formId: req.formId,
          url,
          secret,
          headers,
          enabled: req.enabled ?? true,
          createdAt: at,
          updatedAt: at,
        });
      });
      return { webhook: webhookMessage(hook) };
    },

    async listWebhooks(req, ctx) {
      const caller = requireCaller(ctx);
      if (!req.formId) throw formIdRequired();
      const window = pageWindow(req.page, req.limit);
      await requireForm(req.formId, caller, "form not found");
      const rows = await orm.em.fork().find(
        WebhookEntity,
        { formId: req.formId },
        { orderBy: [{ createdAt: "desc" }, { id: "desc" }], limit: window.fetch, offset: window.offset },
      );
      const page = pageOf(rows, window.limit);
      return { webhooks: page.items.map(webhookMessage), hasMore: page.hasMore };
    },

    async getWebhook(req, ctx) {
      const hook = await callerWebhook(req.id, requireCaller(ctx));
      return { webhook: webhookMessage(hook) };
    },

    async updateWebhook(req, ctx) {
      const caller = requireCaller(ctx);
      const url = req.url === undefined ? undefined : parseWebhookUrl(req.url, allowPrivate);
      const secret = req.secret === undefined ? undefined : parseSecret(req.secret);
      const headers = req.headers === undefined ? undefined : parseHeaders(req.headers.values);
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
          hook.secret = secret;
          changed = true;
        }
        if (headers !== undefined && !sameHeaders(headers, hook.headers)) {
          hook.headers = headers;
          changed = true;
        }
        if (req.enabled !== undefined && req.enabled !== hook.enabled) {
          hook.enabled = req.enabled;
          changed = true;
        }
        // An update that changes nothing keeps updated_at.
        if (changed) hook.updatedAt = now();
        return hook;
      });
      return { webhook: webhookMessage(hook) };
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
      // Internal (delivery): no caller; secrets and headers included. Oldest first, a stable fan-out order.
      if (!req.formId) throw formIdRequired();
      const rows = await orm.em
        .getConnection()
        .execute<WebhookRow[]>(`select * from ${webhooksTable} where "form_id" = ? and "enabled" order by "created_at", "id"`, [req.formId], "all");
      return { webhooks: rows.map((row) => webhookMessage(webhookFromRow(row))) };
    },

    async getWebhookForDelivery(req) {
      // Internal (delivery): no caller; the webhook as it is now, disabled or not; NOT_FOUND once deleted.
      const [row] = req.id ? await orm.em.getConnection().execute<WebhookRow[]>(`select * from ${webhooksTable} where "id" = ?`, [req.id], "all") : [];
      if (!row) throw webhookNotFound();
      return { webhook: webhookMessage(webhookFromRow(row)) };
    },
  };
}

export function routes(router: ConnectRouter, handlers: ServiceImpl<typeof WebhooksService>): void {
  router.service(WebhooksService, handlers);
}
