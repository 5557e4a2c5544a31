// Settings → API keys: list (name, prefix, created, last used); Create API key with a name, the key shown
// once with a copy button; Delete, which refuses the key at once.
import { useId, useRef, useState, type FormEvent } from "react";
import { del, get, post } from "../api.ts";
import { EmptyState, ErrorState, InlineMessage, Loading, useConfirm, useLoad, useNotify } from "../components/ui.tsx";
import { copyText } from "../lib/clipboard.ts";
import { formatDateTime, formatRelative } from "../lib/format.ts";
import type { ApiKey } from "../types.ts";
import { t } from "../i18n/messages.ts";
import { tRich } from "../i18n/react.tsx";

export function ApiKeysPage() {
  const keys = useLoad(() => get<{ items: ApiKey[] }>("/api-keys"), []);
  const [name, setName] = useState("");
  const [created, setCreated] = useState<{ name: string; key: string }>();
  const [copied, setCopied] = useState<boolean>();
  const [error, setError] = useState<string>();
  const keyField = useRef<HTMLInputElement>(null);
  const notify = useNotify();
  const confirm = useConfirm();
  const id = useId();

  const create = async (e: FormEvent) => {
    e.preventDefault();
    setError(undefined);
    try {
      const res = await post<ApiKey & { key: string }>("/api-keys", { name });
      setCreated({ name: res.name, key: res.key });
      setCopied(undefined);
      setName("");
      keys.reload();
      requestAnimationFrame(() => keyField.current?.select());
    } catch (err) {
      setError((err as Error).message);
    }
  };

  const remove = async (key: ApiKey) => {
    const ok = await confirm({
      title: t("keys.deleteTitle", { name: key.name }),
      body: <p>{t("keys.deleteBody")}</p>,
      confirmLabel: t("keys.delete"),
      danger: true,
    });
    if (!ok) return;
    try {
      await del(`/api-keys/${key.id}`);
      notify(t("keys.deleted", { name: key.name }));
      keys.reload();
    } catch (err) {
      notify((err as Error).message, "error");
    }
  };

  return (
    <div className="page">
      <div className="page-head">
        <div>
          <h1>{t("nav.apiKeys")}</h1>
          <p className="muted">
            {tRich("keys.intro", {
              path: <code>/api/v1</code>,
              reference: (chunks) => <a href="/developers">{chunks}</a>,
              header: <code>Authorization: Bearer &lt;key&gt;</code>,
            })}
          </p>
        </div>
      </div>

      <form className="card row create-key" onSubmit={create}>
        <div className="field field-inline">
          <label htmlFor={`${id}-name`}>{t("keys.name")}</label>
          <input id={`${id}-name`} required maxLength={100} value={name} placeholder={t("keys.namePlaceholder")} onChange={(e) => setName(e.target.value)} />
        </div>
        <button type="submit" className="primary">
          {t("keys.create")}
        </button>
      </form>
      {error && <InlineMessage kind="error">{error}</InlineMessage>}

      {created && (
        <div className="card new-key" role="region" aria-labelledby={`${id}-new`}>
          <h2 id={`${id}-new`}>{t("keys.newKey", { name: created.name })}</h2>
          <p>
            <strong>{t("keys.copyNow")}</strong> {t("keys.onlyHash")}
          </p>
          <div className="row">
            <label className="sr-only" htmlFor={`${id}-key`}>
              {t("keys.newKeyLabel")}
            </label>
            <input id={`${id}-key`} ref={keyField} className="mono key-value" readOnly value={created.key} onFocus={(e) => e.target.select()} />
            <button
              type="button"
              onClick={async () => {
                const ok = await copyText(created.key, keyField.current);
                setCopied(ok);
              }}
            >
              {t("keys.copy")}
            </button>
            <button type="button" onClick={() => setCreated(undefined)}>
              {t("keys.done")}
            </button>
          </div>
          <p role="status" aria-live="polite" className="hint">
            {copied === true ? t("keys.copied") : copied === false ? t("keys.copyBlocked") : ""}
          </p>
        </div>
      )}

      {keys.loading && !keys.data ? (
        <Loading what={t("keys.loading")} />
      ) : keys.error ? (
        <ErrorState message={keys.error} onRetry={keys.reload} />
      ) : keys.data!.items.length === 0 ? (
        <EmptyState title={t("keys.empty")}>
          <p>{t("keys.emptyText")}</p>
        </EmptyState>
      ) : (
        <div className="table-wrap">
          <table className="table">
            <caption className="sr-only">{t("keys.caption")}</caption>
            <thead>
              <tr>
                <th scope="col">{t("forms.colName")}</th>
                <th scope="col">{t("keys.key")}</th>
                <th scope="col">{t("admin.created")}</th>
                <th scope="col">{t("keys.lastUsed")}</th>
                <th scope="col">
                  <span className="sr-only">{t("forms.colActions")}</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {keys.data!.items.map((key) => (
                <tr key={key.id}>
                  <th scope="row">{key.name}</th>
                  <td>
                    <code>{key.prefix}…</code>
                  </td>
                  <td>{formatDateTime(key.createdAt)}</td>
                  <td>
                    {key.lastUsedAt ? (
                      <time dateTime={key.lastUsedAt} title={formatDateTime(key.lastUsedAt)}>
                        {formatRelative(key.lastUsedAt)}
                      </time>
                    ) : (
                      t("time.never")
                    )}
                  </td>
                  <td className="actions-cell">
                    <button type="button" className="danger-outline" onClick={() => remove(key)} aria-label={t("keys.deleteNamed", { name: key.name })}>
                      {t("editor.delete")}
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}
