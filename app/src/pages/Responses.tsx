// Responses: a table whose columns are the questions (older versions' columns kept), filtered by all,
// completed or partial; one response shown against the version its respondent saw; delete; CSV export;
// the Summary of every question (Summary.tsx) and the form's Insights (Insights.tsx).
import { useEffect, useId, useState } from "react";
import { del, get } from "../api.ts";
import { EmptyState, ErrorState, Loading, useConfirm, useLoad, useNotify } from "../components/ui.tsx";
import { responseColumns, type ResponseColumn as Column } from "@formsvc/api-records/columns";
import { columnsWithAnswers } from "../lib/columns.ts";
import { blockTypeLabels, isInputType } from "../lib/document.ts";
import { formatDateTime } from "../lib/format.ts";
import { Link, useRouter } from "../router.tsx";
import { InsightsView } from "./Insights.tsx";
import { SummaryView } from "./Summary.tsx";
import type { Answer, Block, Form, FormDocument, Page, Question, Submission } from "../types.ts";
import { t, type MessageKey } from "../i18n/messages.ts";
import { tRich } from "../i18n/react.tsx";

type Filter = "all" | "completed" | "partial";
/** The views of the tab, by their tab's name. */
const views = { table: "responses.viewTable", summary: "responses.viewSummary", insights: "responses.viewInsights" } as const satisfies Record<string, MessageKey>;
const pageSize = 50;

export function ResponsesTab({ form, responseId }: { form: Form; responseId?: string }) {
  const [view, setView] = useState<keyof typeof views>("table");
  if (responseId) return <ResponseView form={form} responseId={responseId} />;
  return (
    <>
      <div className="segmented" role="tablist" aria-label={t("responses.views")}>
        {(Object.keys(views) as (keyof typeof views)[]).map((v) => (
          <button key={v} type="button" role="tab" aria-selected={view === v} className={view === v ? "selected" : undefined} onClick={() => setView(v)}>
            {t(views[v])}
          </button>
        ))}
      </div>
      {view === "table" ? <ResponsesTable form={form} /> : view === "summary" ? <SummaryView form={form} /> : <InsightsView form={form} />}
    </>
  );
}

function AnswerCell({ answer }: { answer: Answer | undefined }) {
  if (!answer) return <span className="muted">—</span>;
  // A question's null is one the form's logic passed over (hidden, or on a page jumped past); a
  // calculated field's null is a failed expression, so only questions read "skipped". The CSV export
  // leaves such a cell empty, as for an unanswered question, so spreadsheets see no made-up text.
  if (answer.value === null && isInputType(answer.type)) {
    return (
      <span className="muted skipped" title={t("responses.skippedHint")}>
        {t("responses.skipped")}
      </span>
    );
  }
  if ("files" in answer && answer.files.length) {
    return (
      <ul className="files">
        {answer.files.map((f, i) => (
          <li key={i}>
            <a href={f.url} target="_blank" rel="noreferrer">
              {f.name}
            </a>
          </li>
        ))}
      </ul>
    );
  }
  return <>{answer.display || <span className="muted">—</span>}</>;
}

function ResponsesTable({ form }: { form: Form }) {
  const [filter, setFilter] = useState<Filter>("all");
  const [pages, setPages] = useState<Submission[][]>([]);
  const [hasMore, setHasMore] = useState(false);
  const [loadingMore, setLoadingMore] = useState(false);
  const filterId = useId();
  const notify = useNotify();
  const confirm = useConfirm();
  const questions = useLoad(() => get<{ items: Question[] }>(`/forms/${form.id}/questions`), [form.id, form.version]);
  const first = useLoad(() => get<Page<Submission>>(`/forms/${form.id}/submissions?filter=${filter}&limit=${pageSize}`), [form.id, filter]);

  useEffect(() => {
    if (first.data) {
      setPages([first.data.items]);
      setHasMore(Boolean(first.data.hasMore));
    }
  }, [first.data]);

  const loadMore = async () => {
    setLoadingMore(true);
    try {
      const next = await get<Page<Submission>>(`/forms/${form.id}/submissions?filter=${filter}&limit=${pageSize}&page=${pages.length + 1}`);
      setPages((p) => [...p, next.items]);
      setHasMore(Boolean(next.hasMore));
    } catch (err) {
      notify((err as Error).message, "error");
    } finally {
      setLoadingMore(false);
    }
  };

  const remove = async (sub: Submission) => {
    const ok = await confirm({
      title: t("responses.deleteTitle"),
      body: <p>{t("responses.deleteBody")}</p>,
      confirmLabel: t("responses.delete"),
      danger: true,
    });
    if (!ok) return;
    try {
      await del(`/forms/${form.id}/submissions/${sub.id}`);
      setPages((p) => p.map((list) => list.filter((s) => s.id !== sub.id)));
      notify(t("responses.deleted"));
    } catch (err) {
      notify((err as Error).message, "error");
    }
  };

  const rows = pages.flat();
  const columns: Column[] = questions.data ? columnsWithAnswers(responseColumns(questions.data.items, rows), rows) : [];
  const loading = (first.loading && !first.data) || (questions.loading && !questions.data);
  const error = first.error ?? questions.error;
  const publicPath = `/f/${form.id}`;

  return (
    <div className="responses">
      <div className="toolbar">
        <div className="field field-inline">
          <label htmlFor={filterId}>{t("responses.show")}</label>
          <select id={filterId} value={filter} onChange={(e) => setFilter(e.target.value as Filter)}>
            <option value="all">{t("responses.all")}</option>
            <option value="completed">{t("responses.completed")}</option>
            <option value="partial">{t("responses.partial")}</option>
          </select>
        </div>
        <button type="button" onClick={() => first.reload()}>
          {t("responses.refresh")}
        </button>
        <a className="button" href={`/app/api/forms/${form.id}/submissions.csv?filter=${filter}`} download>
          {t("summary.export", { format: "CSV" })}
        </a>
        <a className="button" href={`/app/api/forms/${form.id}/submissions.xlsx?filter=${filter}`} download>
          {t("summary.export", { format: "XLSX" })}
        </a>
      </div>
      {loading ? (
        <Loading what={t("responses.loading")} />
      ) : error ? (
        <ErrorState message={error} onRetry={() => (first.reload(), questions.reload())} />
      ) : rows.length === 0 ? (
        <EmptyState title={filter === "all" ? t("responses.empty") : filter === "completed" ? t("responses.emptyCompleted") : t("responses.emptyPartial")}>
          {form.status === "draft" ? (
            <p>{t("responses.emptyDraft")}</p>
          ) : (
            <p>
              {tRich("responses.emptyShare", {
                link: (
                  <a href={publicPath} target="_blank" rel="noreferrer">
                    {publicPath}
                  </a>
                ),
              })}
            </p>
          )}
        </EmptyState>
      ) : (
        <>
          <p className="muted" aria-live="polite">
            {hasMore ? t("responses.shownMore", { count: rows.length }) : t("responses.shown", { count: rows.length })}
          </p>
          <div className="table-wrap">
            <table className="table responses-table">
              <caption className="sr-only">{t("responses.caption", { name: form.name })}</caption>
              <thead>
                <tr>
                  <th scope="col">{t("responses.colSubmitted")}</th>
                  <th scope="col">{t("forms.colStatus")}</th>
                  {columns.map((c) => (
                    <th scope="col" key={c.key} title={c.older ? t("responses.olderHint") : undefined}>
                      {c.label}
                      {c.older && <span className="muted"> ({t("responses.older")})</span>}
                    </th>
                  ))}
                  <th scope="col">
                    <span className="sr-only">{t("forms.colActions")}</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {rows.map((sub) => (
                  <tr key={sub.id} data-response-id={sub.id}>
                    <td>
                      <Link to={`/forms/${form.id}/responses/${sub.id}`} aria-label={t("responses.viewOf", { when: formatDateTime(sub.submittedAt ?? sub.updatedAt) })}>
                        {formatDateTime(sub.submittedAt ?? sub.updatedAt)}
                      </Link>
                    </td>
                    <td>{sub.completed ? <span className="badge badge-published">{t("responses.completed")}</span> : <span className="badge badge-draft">{t("responses.partial")}</span>}</td>
                    {columns.map((c) => (
                      <td key={c.key}>
                        <AnswerCell answer={sub.answers[c.key]} />
                      </td>
                    ))}
                    <td className="actions-cell">
                      <button type="button" className="danger-outline" onClick={() => remove(sub)} aria-label={t("responses.deleteOf", { when: formatDateTime(sub.submittedAt ?? sub.updatedAt) })}>
                        {t("editor.delete")}
                      </button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          {hasMore && (
            <button type="button" onClick={loadMore} disabled={loadingMore}>
              {loadingMore ? `${t("ui.loading")}…` : t("responses.loadMore")}
            </button>
          )}
        </>
      )}
    </div>
  );
}

/** One answer's place in the version's document: input blocks in order, then the extra columns. */
function orderedAnswers(document: FormDocument | null, answers: Record<string, Answer>): { key: string; question: string; type: string; answer: Answer | undefined }[] {
  const out: { key: string; question: string; type: string; answer: Answer | undefined }[] = [];
  const seen = new Set<string>();
  for (const block of (document?.blocks ?? []) as Block[]) {
    if (!isInputType(block.type)) continue;
    const b = block as Block & { key?: string; question?: string };
    if (!b.key) continue;
    seen.add(b.key);
    out.push({ key: b.key, question: b.question ?? b.key, type: block.type, answer: answers[b.key] });
  }
  for (const [key, answer] of Object.entries(answers)) {
    if (!seen.has(key)) out.push({ key, question: answer.label, type: answer.type, answer });
  }
  return out;
}

const extraTypeLabels: Record<string, MessageKey> = {
  HIDDEN_FIELDS: "responses.type.hidden",
  RESPONDENT_COUNTRY: "responses.type.country",
  CALCULATED_FIELD: "responses.type.calculated",
};

function ResponseView({ form, responseId }: { form: Form; responseId: string }) {
  const loaded = useLoad(() => get<{ submission: Submission; document: FormDocument | null }>(`/forms/${form.id}/submissions/${responseId}`), [form.id, responseId]);
  const confirm = useConfirm();
  const notify = useNotify();
  const { navigate } = useRouter();
  const back = <Link to={`/forms/${form.id}/responses`}>← {t("responses.all")}</Link>;
  if (loaded.loading && !loaded.data) return <Loading what={t("responses.loadingOne")} />;
  if (loaded.error) {
    return (
      <div>
        <p>{back}</p>
        <ErrorState message={loaded.error} onRetry={loaded.reload} />
      </div>
    );
  }
  const { submission, document } = loaded.data!;
  const remove = async () => {
    const ok = await confirm({
      title: t("responses.deleteTitle"),
      body: <p>{t("responses.deleteBody")}</p>,
      confirmLabel: t("responses.delete"),
      danger: true,
    });
    if (!ok) return;
    try {
      await del(`/forms/${form.id}/submissions/${submission.id}`);
      notify(t("responses.deleted"));
      navigate(`/forms/${form.id}/responses`);
    } catch (err) {
      notify((err as Error).message, "error");
    }
  };
  return (
    <article className="response" aria-labelledby="response-title">
      <p>{back}</p>
      <div className="page-head">
        <div>
          <h2 id="response-title">{t("responses.response")}</h2>
          <p className="muted">
            {submission.completed ? t("responses.completed") : t("responses.partial")} ·{" "}
            {t("responses.meta", { submitted: formatDateTime(submission.submittedAt), started: formatDateTime(submission.createdAt), version: submission.version })}
            {submission.version !== form.version && ` ${t("responses.nowAt", { version: form.version })}`}
          </p>
        </div>
        <button type="button" className="danger-outline" onClick={remove}>
          {t("responses.delete")}
        </button>
      </div>
      <dl className="answers">
        {orderedAnswers(document, submission.answers).map(({ key, question, type, answer }) => (
          <div key={key} className="answer">
            <dt>
              {question}
              <span className="muted"> · {blockTypeLabels[type as keyof typeof blockTypeLabels] ?? (extraTypeLabels[type] ? t(extraTypeLabels[type]) : type)}</span>
            </dt>
            <dd>
              <AnswerCell answer={answer} />
            </dd>
          </div>
        ))}
      </dl>
      <p className="muted">
        {t("responses.id")} <code>{submission.id}</code>
      </p>
    </article>
  );
}
