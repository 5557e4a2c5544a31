// The Build tab's live preview: the hosted page of the document being edited, unsaved changes included,
// beside the editor. Each change is posted (300 ms after typing stops, the request before it abandoned) to
// POST /app/api/forms/:id/preview, which renders it as /f/:id would; the page is shown in a frame at a
// desktop's or a phone's width, scaled down to fit. Its answers go to the preview's sink, which keeps nothing.
import { useEffect, useMemo, useRef, useState } from "react";
import { postForHtml } from "../api.ts";
import type { Draft } from "../lib/document.ts";
import { documentToSave } from "../lib/keys.ts";
import { t } from "../i18n/messages.ts";

/** The widths (CSS px) the page is laid out at: a small laptop's window and a common phone's. */
const previewWidths = { desktop: 1024, phone: 390 } as const;
type Device = keyof typeof previewWidths;

/** How long typing must pause before the preview is asked for again. */
const settleMs = 300;

type State = { kind: "loading" } | { kind: "updating" } | { kind: "current" } | { kind: "waiting"; reason: string };

export function LivePreview({ formId, draft }: { formId: string; draft: Draft }) {
  const [device, setDevice] = useState<Device>("desktop");
  const [html, setHtml] = useState<string>();
  const [state, setState] = useState<State>({ kind: "loading" });
  const frame = useRef<HTMLIFrameElement>(null);
  const stage = useRef<HTMLDivElement>(null);
  const [stageSize, setStageSize] = useState({ width: 0, height: 0 });
  /** The request body of the page shown, so an unchanged document is not asked for again. */
  const shown = useRef<string>(undefined);
  /** Where the person had scrolled the page, kept across updates. */
  const scrollY = useRef(0);
  /** The first page is asked for at once; later ones once the edits settle, whether or not one was shown. */
  const asked = useRef(false);

  const request = useMemo(() => ({ name: draft.name, document: documentToSave(draft) }), [draft]);
  const body = useMemo(() => JSON.stringify(request), [request]);

  // Keyed by `body`: `request` changes with it, and an equal draft needs no new page.
  useEffect(() => {
    if (body === shown.current) return;
    const controller = new AbortController();
    const timer = setTimeout(
      async () => {
        asked.current = true;
        setState((s) => (s.kind === "loading" ? s : { kind: "updating" }));
        try {
          const page = await postForHtml(`/forms/${formId}/preview`, request, controller.signal);
          shown.current = body;
          scrollY.current = frame.current?.contentWindow?.scrollY ?? 0;
          setHtml(page);
          setState({ kind: "current" });
        } catch (err) {
          if (!controller.signal.aborted) setState({ kind: "waiting", reason: (err as Error).message });
        }
      },
      asked.current ? settleMs : 0,
    );
    return () => {
      clearTimeout(timer);
      controller.abort();
    };
  }, [body, formId]);

  useEffect(() => {
    const element = stage.current;
    if (!element) return;
    const observer = new ResizeObserver(([entry]) => setStageSize({ width: entry.contentRect.width, height: entry.contentRect.height }));
    observer.observe(element);
    return () => observer.disconnect();
  }, []);

  const width = previewWidths[device];
  const scale = stageSize.width > 0 ? Math.min(1, stageSize.width / width) : 1;

  return (
    <section className="live-preview" aria-label={t("livePreview.label")} data-state={state.kind}>
      <div className="live-preview-bar">
        <h2>{t("formTabs.preview")}</h2>
        <div className="segmented" role="group" aria-label={t("livePreview.width")}>
          {(Object.keys(previewWidths) as Device[]).map((d) => (
            <button key={d} type="button" className={d === device ? "selected" : undefined} aria-pressed={d === device} onClick={() => setDevice(d)}>
              {d === "desktop" ? t("livePreview.desktop") : t("livePreview.phone")}
            </button>
          ))}
        </div>
      </div>
      <p className={state.kind === "waiting" ? "live-preview-status error-text" : "live-preview-status muted"} role="status">
        {state.kind === "waiting"
          ? t("livePreview.waiting", { reason: state.reason })
          : state.kind === "loading"
            ? t("livePreview.loading")
            : t("livePreview.ready", { width })}
      </p>
      <div className="live-preview-stage" ref={stage}>
        {html !== undefined && (
          <iframe
            ref={frame}
            className="live-preview-frame"
            title={t("livePreview.frameTitle")}
            srcDoc={html}
            width={width}
            style={{ height: stageSize.height / scale || undefined, transform: scale < 1 ? `scale(${scale})` : undefined }}
            onLoad={() => frame.current?.contentWindow?.scrollTo(0, scrollY.current)}
          />
        )}
      </div>
    </section>
  );
}
