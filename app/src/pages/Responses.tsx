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

type Filter = "all" | "completed" | "partial";
/** The views of the tab, by their tab's name. */
const views = { table: "Responses", summary: "Summary", insights: "Insights" };
const pageSize = 50;

export function ResponsesTab({ form, responseId }: { form: Form; responseId?: string }) {
  const [view, setView] = useState<keyof typeof views>("table");
  if (responseId) return <ResponseView form={form} responseId={responseId} />;
  return (
    <>
      <div className="segmented" role="tablist" aria-label="Responses view">
        {(Object.keys(views) as (keyof typeof views)[]).map((v) => (
          <button key={v} type="button" role="tab" aria-selected={view === v} className={view === v ? "selected" : undefined} onClick={() => setView(v)}>
            {views[v]}
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
      <span className="muted skipped" title="Skipped: the form's logic did not show this question">
        skipped
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
      title: "Delete this response?",
      body: <p>The response and its files are deleted for good. This cannot be undone.</p>,
      confirmLabel: "Delete response",
      danger: true,
    });
    if (!ok) return;
    try {
      await del(`/forms/${form.id}/submissions/${sub.id}`);
      setPages((p) => p.map((list) => list.filter((s) => s.id !== sub.id)));
      notify("Response deleted.");
    } catch (err) {
      notify((err as Error).message, "error");
    }
  };

  const rows = pages.flat();
  const columns: Column[] = questions.data ? columnsWithAnswers(responseColumns(questions.data.items, rows), rows) : [];
  const loading = (first.loading && !first.data) || (questions.loading && !questions.data);
  const error = first.error ?? questions.error;

  return (
    <div className="responses">
      <div className="toolbar">
        <div className="field field-inline">
          <label htmlFor={filterId}>Show</label>
          <select id={filterId} value={filter} onChange={(e) => setFilter(e.target.value as Filter)}>
            <option value="all">All responses</option>
            <option value="completed">Completed</option>
            <option value="partial">Partial</option>
          </select>
        </div>
        <button type="button" onClick={() => first.reload()}>
          Refresh
        </button>
        <a className="button" href={`/app/api/forms/${form.id}/submissions.csv?filter=${filter}`} download>
          Export CSV
        </a>
        <a className="button" href={`/app/api/forms/${form.id}/submissions.xlsx?filter=${filter}`} download>
          Export XLSX
        </a>
      </div>
      {loading ? (
        <Loading what="Loading responses" />
      ) : error ? (
        <ErrorState message={error} onRetry={() => (first.reload(), questions.reload())} />
      ) : rows.length === 0 ? (
        <EmptyState title={filter === "all" ? "No responses yet" : `No ${filter} responses`}>
          {form.status === "draft" ? (
            <p>Publish the form, then share its public link to collect responses.</p>
          ) : (
            <p>
              Share the public link{" "}
              <a href={`/f/${form.id}`} target="_blank" rel="noreferrer">
                /f/{form.id}
              </a>
              ; responses show up here as they arrive.
            </p>
          )}
        </EmptyState>
      ) : (
        <>
          <p className="muted" aria-live="polite">
            {rows.length} {rows.length === 1 ? "response" : "responses"} shown{hasMore ? " (more to load)" : ""}.
          </p>
          <div className="table-wrap">
            <table className="table responses-table">
              <caption className="sr-only">Responses to {form.name}</caption>
              <thead>
                <tr>
                  <th scope="col">Submitted</th>
                  <th scope="col">Status</th>
                  {columns.map((c) => (
                    <th scope="col" key={c.key} title={c.older ? "A question of an earlier version" : undefined}>
                      {c.label}
                      {c.older && <span className="muted"> (earlier version)</span>}
                    </th>
                  ))}
                  <th scope="col">
                    <span className="sr-only">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {rows.map((sub) => (
                  <tr key={sub.id} data-response-id={sub.id}>
                    <td>
                      <Link to={`/forms/${form.id}/responses/${sub.id}`} aria-label={`View response of ${formatDateTime(sub.submittedAt ?? sub.updatedAt)}`}>
                        {formatDateTime(sub.submittedAt ?? sub.updatedAt)}
                      </Link>
                    </td>
                    <td>{sub.completed ? <span className="badge badge-published">Completed</span> : <span className="badge badge-draft">Partial</span>}</td>
                    {columns.map((c) => (
                      <td key={c.key}>
                        <AnswerCell answer={sub.answers[c.key]} />
                      </td>
                    ))}
                    <td className="actions-cell">
                      <button type="button" className="danger-outline" onClick={() => remove(sub)} aria-label={`Delete response of ${formatDateTime(sub.submittedAt ?? sub.updatedAt)}`}>
                        Delete
                      </button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          {hasMore && (
            <button type="button" onClick={loadMore} disabled={loadingMore}>
              {loadingMore ? "Loading…" : "Load more"}
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

const extraTypeLabels: Record<string, string> = {
  HIDDEN_FIELDS: "Hidden field",
  RESPONDENT_COUNTRY: "Country",
  CALCULATED_FIELD: "Calculated field",
};

function ResponseView({ form, responseId }: { form: Form; responseId: string }) {
  const loaded = useLoad(() => get<{ submission: Submission; document: FormDocument | null }>(`/forms/${form.id}/submissions/${responseId}`), [form.id, responseId]);
  const confirm = useConfirm();
  const notify = useNotify();
  const { navigate } = useRouter();
  const back = <Link to={`/forms/${form.id}/responses`}>← All responses</Link>;
  if (loaded.loading && !loaded.data) return <Loading what="Loading the response" />;
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
      title: "Delete this response?",
      body: <p>The response and its files are deleted for good. This cannot be undone.</p>,
      confirmLabel: "Delete response",
      danger: true,
    });
    if (!ok) return;
    try {
      await del(`/forms/${form.id}/submissions/${submission.id}`);
      notify("Response deleted.");
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
          <h2 id="response-title">Response</h2>
          <p className="muted">
            {submission.completed ? "Completed" : "Partial"} · submitted {formatDateTime(submission.submittedAt)} · started {formatDateTime(submission.createdAt)} · answered
            version {submission.version}
            {submission.version !== form.version && ` (the form is now at version ${form.version})`}
          </p>
        </div>
        <button type="button" className="danger-outline" onClick={remove}>
          Delete response
        </button>
      </div>
      <dl className="answers">
        {orderedAnswers(document, submission.answers).map(({ key, question, type, answer }) => (
          <div key={key} className="answer">
            <dt>
              {question}
              <span className="muted"> · {blockTypeLabels[type as keyof typeof blockTypeLabels] ?? extraTypeLabels[type] ?? type}</span>
            </dt>
            <dd>
              <AnswerCell answer={answer} />
            </dd>
          </div>
        ))}
      </dl>
      <p className="muted">
        Response id <code>{submission.id}</code>
      </p>
    </article>
  );
}
