// The Share tab's single-use links (issue 31): whether the form takes responses only through one
// (settings.requireSingleUseLink), minting a batch of links (POST /forms/:id/links; their tokens are shown
// this once, so they are offered to copy at once), and the links made so far with whether each was used,
// and a button to revoke an unused one.
import { useId, useState, type FormEvent } from "react";
import { get, patch, post } from "../api.ts";
import { ErrorState, InlineMessage, useLoad, useNotify } from "../components/ui.tsx";
import { formatDateTime } from "../lib/format.ts";
import type { Form } from "../types.ts";
import { t } from "../i18n/messages.ts";

interface ResponseLink {
  id: string;
  createdAt: string;
  expiresAt: string | null;
  usedAt: string | null;
  revokedAt: string | null;
}
interface MintedLink extends ResponseLink {
  url: string;
}

/** Most links the list shows; the API's GET /forms/:id/links has them all. */
const shownLinks = 50;

function stateOf(link: ResponseLink): string {
  if (link.usedAt) return t("links.used", { when: formatDateTime(link.usedAt) });
  if (link.revokedAt) return t("links.revoked");
  if (link.expiresAt && Date.parse(link.expiresAt) <= Date.now()) return t("links.expired");
  return link.expiresAt ? t("links.unusedUntil", { when: formatDateTime(link.expiresAt) }) : t("links.unused");
}

export function SingleUseLinks({ form, onSaved }: { form: Form; onSaved(form: Form): void }) {
  const id = useId();
  const notify = useNotify();
  const links = useLoad(() => get<{ items: ResponseLink[] }>(`/forms/${form.id}/links`), [form.id]);
  const [count, setCount] = useState("10");
  const [expires, setExpires] = useState("");
  const [minted, setMinted] = useState<MintedLink[]>([]);
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);

  const setRequired = async (requireSingleUseLink: boolean) => {
    try {
      onSaved(await patch<Form>(`/forms/${form.id}`, { settings: { requireSingleUseLink } }));
      notify(requireSingleUseLink ? t("links.requiredOn") : t("links.requiredOff"));
    } catch (err) {
      notify((err as Error).message, "error");
    }
  };

  const mint = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const body = { count: Number(count), ...(expires ? { expiresAt: new Date(expires).toISOString() } : {}) };
      const made = await post<{ items: MintedLink[] }>(`/forms/${form.id}/links`, body);
      setMinted(made.items);
      links.reload();
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };

  const revoke = async (link: ResponseLink) => {
    try {
      await post(`/forms/${form.id}/links/${link.id}/revoke`);
      links.reload();
    } catch (err) {
      notify((err as Error).message, "error");
    }
  };

  return (
    <section className="card stack" aria-labelledby={`${id}-title`}>
      <h3 id={`${id}-title`}>{t("links.title")}</h3>
      <label className="check">
        <input type="checkbox" checked={form.settings.requireSingleUseLink} onChange={(e) => setRequired(e.target.checked)} /> {t("links.require")}
      </label>
      <form className="row" onSubmit={mint}>
        <div className="field">
          <label htmlFor={`${id}-count`}>{t("links.howMany")}</label>
          <input id={`${id}-count`} type="number" min={1} max={1000} step={1} required value={count} onChange={(e) => setCount(e.target.value)} />
        </div>
        <div className="field">
          <label htmlFor={`${id}-expires`}>{t("links.validUntil")}</label>
          <input id={`${id}-expires`} type="datetime-local" value={expires} onChange={(e) => setExpires(e.target.value)} />
        </div>
        <button type="submit" disabled={busy}>
          {busy ? t("links.creating") : t("links.create")}
        </button>
      </form>
      {error && <InlineMessage kind="error">{error}</InlineMessage>}
      {minted.length > 0 && (
        <div className="field">
          <label htmlFor={`${id}-minted`}>{t("links.minted")}</label>
          <textarea id={`${id}-minted`} className="mono" readOnly rows={Math.min(8, minted.length)} value={minted.map((link) => link.url).join("\n")} onFocus={(e) => e.target.select()} />
        </div>
      )}
      {links.error && <ErrorState message={links.error} onRetry={links.reload} />}
      {links.data && links.data.items.length > 0 && (
        <table>
          <caption className="hint">
            {t("links.usedCount", { used: links.data.items.filter((link) => link.usedAt).length, count: links.data.items.length })}
          </caption>
          <thead>
            <tr>
              <th scope="col">{t("admin.created")}</th>
              <th scope="col">{t("links.state")}</th>
              <th scope="col">
                <span className="sr-only">{t("forms.colActions")}</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {links.data.items.slice(0, shownLinks).map((link) => (
              <tr key={link.id}>
                <td>{formatDateTime(link.createdAt)}</td>
                <td>{stateOf(link)}</td>
                <td>
                  {!link.usedAt && !link.revokedAt && (
                    <button type="button" onClick={() => revoke(link)}>
                      {t("links.revoke")}
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
