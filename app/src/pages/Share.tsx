// A form's Share tab: its public link (at PUBLIC_URL) to copy; values for its hidden fields, which the
// link, the embed codes and the QR code then carry; the embed codes (a frame that takes the form's height,
// and a button that opens the form over the page, both through /embed.js); which sites may embed it
// (settings.embedOrigins, the hosted pages' CSP frame-ancestors); and the link's QR code as SVG and PNG.
import { useEffect, useId, useMemo, useRef, useState, type FormEvent } from "react";
import { get, patch } from "../api.ts";
import { ErrorState, InlineMessage, Loading, useLoad, useNotify } from "../components/ui.tsx";
import { copyText } from "../lib/clipboard.ts";
import { encodeQr, qrSvg, quietZone, type QrCode } from "../lib/qr.ts";
import type { Form } from "../types.ts";
import { SingleUseLinks } from "./SingleUseLinks.tsx";
import { t } from "../i18n/messages.ts";
import { tRich } from "../i18n/react.tsx";

let publicUrlRequest: Promise<string> | undefined;

/** The installation's public address (PUBLIC_URL), which links name; asked once while the app runs. */
export function usePublicUrl() {
  return useLoad(() => {
    publicUrlRequest ??= get<{ publicUrl: string }>("/public-url").then(
      (answer) => answer.publicUrl,
      (err: unknown) => {
        publicUrlRequest = undefined; // asked again next time
        throw err;
      },
    );
    return publicUrlRequest;
  }, []);
}

/** Text safe inside a double-quoted HTML attribute or an element's text. */
function escapeHtml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

/** The form's public link with the hidden fields' values that are filled in, in the document's order. */
function prefilledLink(formUrl: string, names: readonly string[], values: Record<string, string>): string {
  const query = new URLSearchParams();
  for (const name of names) if (values[name]) query.set(name, values[name]);
  const search = query.toString();
  return search ? `${formUrl}?${search}` : formUrl;
}

/** The embed codes of a link: a frame sized by /embed.js, and a button opening the form in a dialog. */
function embedCodes(link: string, publicUrl: string, formName: string): { inline: string; popup: string } {
  const script = `<script src="${escapeHtml(`${publicUrl}/embed.js`)}" async></script>`;
  return {
    inline: `<iframe data-formsvc-embed src="${escapeHtml(link)}" title="${escapeHtml(formName)}" style="width:100%;height:600px;border:0" loading="lazy"></iframe>\n${script}`,
    popup: `<button type="button" data-formsvc-popup="${escapeHtml(link)}">${escapeHtml(formName)}</button>\n${script}`,
  };
}

/** Sites to show the field of them (addresses, the same in every language). */
const exampleOrigins = "https://example.com\nhttps://*.example.org";

/** Origins typed one a line (or separated by spaces or commas), without trailing slashes. */
function originsOf(text: string): string[] {
  return text
    .split(/[\s,]+/)
    .map((origin) => origin.trim().replace(/\/+$/, ""))
    .filter(Boolean);
}

function CopyButton({ text, label, what }: { text: string; label: string; what: string }) {
  const notify = useNotify();
  const [copied, setCopied] = useState(false);
  const timer = useRef(0);
  useEffect(() => () => window.clearTimeout(timer.current), []);
  const copy = async () => {
    if (await copyText(text)) {
      setCopied(true);
      notify(t("share.copied", { what }));
      window.clearTimeout(timer.current);
      timer.current = window.setTimeout(() => setCopied(false), 2000);
    } else {
      notify(t("share.copyFailed", { what }), "error");
    }
  };
  return (
    <button type="button" onClick={copy}>
      {copied ? t("share.copiedButton") : label}
    </button>
  );
}

/** A file name from the form's name: letters, digits and dashes. */
function fileStem(name: string): string {
  return (
    name
      .normalize("NFKD")
      .replace(/[^\w\s-]/g, "")
      .trim()
      .replace(/[\s_]+/g, "-")
      .toLowerCase()
      .slice(0, 60) || "form"
  );
}

function download(blob: Blob, name: string): void {
  const url = URL.createObjectURL(blob);
  const a = document.createElement("a");
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  window.setTimeout(() => URL.revokeObjectURL(url), 1000);
}

/** The code drawn on a canvas, `scale` pixels a module, as a PNG. */
function qrPng(code: QrCode, scale = 10): Promise<Blob> {
  const span = code.size + 2 * quietZone;
  const canvas = document.createElement("canvas");
  canvas.width = canvas.height = span * scale;
  const context = canvas.getContext("2d")!;
  context.fillStyle = "#fff";
  context.fillRect(0, 0, canvas.width, canvas.height);
  context.fillStyle = "#000";
  code.modules.forEach((row, y) =>
    row.forEach((dark, x) => {
      if (dark) context.fillRect((x + quietZone) * scale, (y + quietZone) * scale, scale, scale);
    }),
  );
  return new Promise((resolve, reject) => canvas.toBlob((blob) => (blob ? resolve(blob) : reject(new Error(t("share.pngFailed")))), "image/png"));
}

type Framing = "any" | "listed" | "none";

function framingOf(origins: string[] | null): Framing {
  return origins === null ? "any" : origins.length === 0 ? "none" : "listed";
}

/** Which sites may show the form in a frame: settings.embedOrigins. */
function EmbedOrigins({ form, onSaved }: { form: Form; onSaved(form: Form): void }) {
  const id = useId();
  const notify = useNotify();
  const [framing, setFraming] = useState<Framing>(framingOf(form.settings.embedOrigins));
  const [list, setList] = useState((form.settings.embedOrigins ?? []).join("\n"));
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);

  const save = async (e: FormEvent) => {
    e.preventDefault();
    const embedOrigins = framing === "any" ? null : framing === "none" ? [] : originsOf(list);
    if (framing === "listed" && embedOrigins!.length === 0) {
      setError(t("share.nameASite"));
      return;
    }
    setBusy(true);
    setError(undefined);
    try {
      const saved = await patch<Form>(`/forms/${form.id}`, { settings: { embedOrigins } });
      onSaved(saved);
      setFraming(framingOf(saved.settings.embedOrigins));
      setList((saved.settings.embedOrigins ?? []).join("\n"));
      notify(t("share.embeddingSaved"));
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };

  return (
    <form className="stack" onSubmit={save} aria-labelledby={`${id}-title`}>
      <fieldset>
        <legend id={`${id}-title`}>{t("share.embedSites")}</legend>
        <label className="check">
          <input type="radio" name={`${id}-framing`} checked={framing === "any"} onChange={() => setFraming("any")} /> {t("share.anySite")}
        </label>
        <label className="check">
          <input type="radio" name={`${id}-framing`} checked={framing === "listed"} onChange={() => setFraming("listed")} /> {t("share.onlyThese")}
        </label>
        {framing === "listed" && (
          <div className="field">
            <label htmlFor={`${id}-origins`}>{t("share.allowedSites")}</label>
            <textarea
              id={`${id}-origins`}
              rows={3}
              value={list}
              placeholder={exampleOrigins}
              aria-describedby={`${id}-origins-hint`}
              onChange={(e) => setList(e.target.value)}
            />
            <p className="hint" id={`${id}-origins-hint`}>
              {t("share.originsHint")}
            </p>
          </div>
        )}
        <label className="check">
          <input type="radio" name={`${id}-framing`} checked={framing === "none"} onChange={() => setFraming("none")} /> {t("share.noSite")}
        </label>
      </fieldset>
      {error && <InlineMessage kind="error">{error}</InlineMessage>}
      <div className="actions">
        <button type="submit" className="primary" disabled={busy}>
          {busy ? t("editor.saving") : t("share.saveEmbedding")}
        </button>
      </div>
    </form>
  );
}

export function ShareTab({ form, onSaved }: { form: Form; onSaved(form: Form): void }) {
  const id = useId();
  const notify = useNotify();
  const address = usePublicUrl();
  const hiddenNames = (form.document.hiddenFields ?? []).map((field) => field.name);
  const [values, setValues] = useState<Record<string, string>>({});

  const publicUrl = address.data;
  const link = publicUrl ? prefilledLink(`${publicUrl}/f/${form.id}`, hiddenNames, values) : "";
  const qr = useMemo((): { code: QrCode; svg: string } | { error: string } | undefined => {
    if (!link) return undefined;
    try {
      const code = encodeQr(link);
      return { code, svg: qrSvg(code, 200) };
    } catch (err) {
      return { error: (err as Error).message };
    }
  }, [link]);

  if (address.error) return <ErrorState message={address.error} onRetry={address.reload} />;
  if (!publicUrl) return <Loading what={t("share.loading")} />;
  const codes = embedCodes(link, publicUrl, form.name);
  const stem = fileStem(form.name);

  return (
    <div className="stack share">
      {form.status === "draft" && (
        <InlineMessage kind="info">{t("share.draft")}</InlineMessage>
      )}
      {form.status === "closed" && <InlineMessage kind="info">{t("share.closed")}</InlineMessage>}

      <section className="card" aria-labelledby={`${id}-link`}>
        <h3 id={`${id}-link`}>{t("share.link")}</h3>
        <div className="row">
          <input readOnly value={link} aria-label={t("share.linkLabel")} onFocus={(e) => e.target.select()} />
          <CopyButton text={link} label={t("share.copyLink")} what={t("share.theLink")} />
          <a className="button" href={link} target="_blank" rel="noreferrer">
            {t("share.open")}
          </a>
        </div>
        {hiddenNames.length > 0 && (
          <fieldset className="stack" style={{ marginTop: "1rem" }}>
            <legend>{t("share.prefill")}</legend>
            <p className="hint">{t("share.prefillHint")}</p>
            <div className="grid-2">
              {hiddenNames.map((name) => (
                <div className="field" key={name}>
                  <label htmlFor={`${id}-hidden-${name}`}>{name}</label>
                  <input id={`${id}-hidden-${name}`} value={values[name] ?? ""} maxLength={500} onChange={(e) => setValues({ ...values, [name]: e.target.value })} />
                </div>
              ))}
            </div>
          </fieldset>
        )}
      </section>

      <SingleUseLinks form={form} onSaved={onSaved} />

      <section className="card stack" aria-labelledby={`${id}-embed`}>
        <h3 id={`${id}-embed`}>{t("share.embed")}</h3>
        <div className="field">
          <label htmlFor={`${id}-inline`}>{t("share.inline")}</label>
          <textarea id={`${id}-inline`} className="mono" readOnly rows={4} value={codes.inline} onFocus={(e) => e.target.select()} />
          <div className="actions">
            <CopyButton text={codes.inline} label={t("share.copyEmbed")} what={t("share.theEmbed")} />
          </div>
        </div>
        <div className="field">
          <label htmlFor={`${id}-popup`}>{t("share.popup")}</label>
          <textarea id={`${id}-popup`} className="mono" readOnly rows={3} value={codes.popup} onFocus={(e) => e.target.select()} />
          <div className="actions">
            <CopyButton text={codes.popup} label={t("share.copyButton")} what={t("share.theButton")} />
          </div>
        </div>
        <p className="hint">
          {tRich("share.pasteHint", { script: <code>{publicUrl}/embed.js</code> })}
        </p>
        <EmbedOrigins form={form} onSaved={onSaved} />
      </section>

      <section className="card" aria-labelledby={`${id}-qr`}>
        <h3 id={`${id}-qr`}>{t("share.qr")}</h3>
        {qr && "error" in qr && <InlineMessage kind="error">{qr.error} {t("share.qrTooLong")}</InlineMessage>}
        {qr && "svg" in qr && (
          <div className="row" style={{ alignItems: "flex-start" }}>
            <img
              src={`data:image/svg+xml;charset=utf-8,${encodeURIComponent(qr.svg)}`}
              width={200}
              height={200}
              alt={t("share.qrOf", { link })}
              data-version={qr.code.version}
            />
            <div className="stack">
              <p className="hint">{t("share.qrHint")}</p>
              <div className="actions">
                <button type="button" onClick={() => download(new Blob([qr.svg], { type: "image/svg+xml" }), `${stem}-qr.svg`)}>
                  {t("share.download", { format: "SVG" })}
                </button>
                <button
                  type="button"
                  onClick={() =>
                    qrPng(qr.code).then(
                      (png) => download(png, `${stem}-qr.png`),
                      (err: Error) => notify(err.message, "error"),
                    )
                  }
                >
                  {t("share.download", { format: "PNG" })}
                </button>
              </div>
            </div>
          </div>
        )}
      </section>
    </div>
  );
}
