// Summary: the form's completed responses summed up per question by the server (any number of them),
// drawn as plain SVG and CSS: choices as bars, ratings and dates as columns, numbers as min/median/max,
// text as its latest answers. A search and a date range narrow it (the CSV and XLSX exports follow the range); it
// is read again when the form's response count changes (checked every 10 seconds while visible).
import { useEffect, useId, useState } from "react";
import { get } from "../api.ts";
import { EmptyState, ErrorState, Loading, useLoad } from "../components/ui.tsx";
import { questionTypeOf } from "@formsvc/form-document/block-types";
import { formatNumber as formatLocaleNumber } from "../lib/format.ts";
import type { Form, QuestionSummary, ResponseSummary } from "../types.ts";
import { t } from "../i18n/messages.ts";

type ValueCount = ResponseSummary["submittedByDay"][number];

/** How often the response count is checked while the page is visible. */
const refreshMs = 10_000;

/** The query of a date range (days in the browser's zone, `until` inclusive) and a search. */
export function summaryQuery(since: string, until: string, search = ""): string {
  const params = new URLSearchParams();
  if (since) params.set("since", new Date(`${since}T00:00:00`).toISOString());
  if (until) {
    const end = new Date(`${until}T00:00:00`);
    end.setDate(end.getDate() + 1);
    params.set("until", end.toISOString());
  }
  if (search) params.set("search", search);
  return params.toString();
}

/**
 * Calls `reload` when the form's completed responses changed: their count (a cheap read of the form) is
 * checked every `ms` while the page is visible, and when it becomes visible again, so a summary over
 * millions of responses is counted again only when there is something new.
 */
function useReloadOnNewResponses(formId: string, reload: () => void, ms: number) {
  useEffect(() => {
    let known: number | undefined;
    const check = async () => {
      if (document.visibilityState !== "visible") return;
      const count = await get<Form>(`/forms/${formId}`).then((f) => f.responseCount, () => known);
      if (known !== undefined && count !== known) reload();
      known = count;
    };
    void check();
    const timer = setInterval(check, ms);
    document.addEventListener("visibilitychange", check);
    return () => {
      clearInterval(timer);
      document.removeEventListener("visibilitychange", check);
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [formId, ms]);
}

/** A range of whole days in the browser's zone (empty: open), as both Results views filter by it. */
export function useDateRange() {
  const [since, setSince] = useState("");
  const [until, setUntil] = useState("");
  return { since, until, setSince, setUntil };
}

/** The range's two date fields, each bounding the other. */
export function DateRangeFields({ range }: { range: ReturnType<typeof useDateRange> }) {
  const ids = { since: useId(), until: useId() };
  const { since, until, setSince, setUntil } = range;
  return (
    <>
      <div className="field field-inline">
        <label htmlFor={ids.since}>{t("summary.from")}</label>
        <input id={ids.since} type="date" value={since} max={until || undefined} onChange={(e) => setSince(e.target.value)} />
      </div>
      <div className="field field-inline">
        <label htmlFor={ids.until}>{t("summary.to")}</label>
        <input id={ids.until} type="date" value={until} min={since || undefined} onChange={(e) => setUntil(e.target.value)} />
      </div>
    </>
  );
}

export function SummaryView({ form }: { form: Form }) {
  const [searchInput, setSearchInput] = useState("");
  const [search, setSearch] = useState("");
  const range = useDateRange();
  const { since, until } = range;
  const ids = { search: useId() };
  // The search is sent once typing pauses.
  useEffect(() => {
    const timer = setTimeout(() => setSearch(searchInput.trim()), 300);
    return () => clearTimeout(timer);
  }, [searchInput]);
  const query = summaryQuery(since, until, search);
  const summary = useLoad(() => get<ResponseSummary>(`/forms/${form.id}/summary?${query}`), [form.id, query]);
  useReloadOnNewResponses(form.id, summary.reload, refreshMs);

  return (
    <div className="summary">
      <div className="toolbar">
        <div className="field field-inline">
          <label htmlFor={ids.search}>{t("summary.search")}</label>
          <input id={ids.search} type="search" value={searchInput} onChange={(e) => setSearchInput(e.target.value)} />
        </div>
        <DateRangeFields range={range} />
        {(["csv", "xlsx"] as const).map((format) => (
          <a key={format} className="button" href={`/app/api/forms/${form.id}/submissions.${format}?filter=completed&${summaryQuery(since, until)}`} download>
            {t("summary.export", { format: format.toUpperCase() })}
          </a>
        ))}
      </div>
      {summary.loading && !summary.data ? (
        <Loading what={t("summary.loading")} />
      ) : summary.error && !summary.data ? (
        <ErrorState message={summary.error} onRetry={summary.reload} />
      ) : summary.data!.responses === 0 && !search && !since && !until ? (
        <EmptyState title={t("summary.empty")}>
          <p>{t("summary.emptyText")}</p>
        </EmptyState>
      ) : (
        <SummaryCharts summary={summary.data!} />
      )}
    </div>
  );
}

function SummaryCharts({ summary }: { summary: ResponseSummary }) {
  return (
    <>
      <section className="card summary-card" aria-labelledby="summary-total">
        <h3 id="summary-total" aria-live="polite">
          {t("summary.completed", { count: summary.responses })}
        </h3>
        {summary.submittedByDay.length > 0 && <Columns counts={summary.submittedByDay} label={t("summary.byDay")} />}
      </section>
      {summary.questions.map((q) => (
        <QuestionCard key={q.key} question={q} responses={summary.responses} />
      ))}
    </>
  );
}

function QuestionCard({ question: q, responses }: { question: QuestionSummary; responses: number }) {
  const headingId = useId();
  return (
    <section className="card summary-card" aria-labelledby={headingId} data-question={q.key}>
      <h3 id={headingId}>{q.label}</h3>
      <p className="muted">
        {t("summary.answered", { answered: q.answered, count: responses })}
      </p>
      {q.answered > 0 && <QuestionChart question={q} />}
    </section>
  );
}

/** The chart of a question's answer shape. */
function QuestionChart({ question: q }: { question: QuestionSummary }) {
  switch (q.shape) {
    case "option":
    case "options":
      return <Bars counts={q.counts} total={q.answered} label={t("summary.answersTo", { label: q.label })} />;
    case "steps":
      return (
        <>
          <Columns counts={q.counts} label={t("summary.ratingsOf", { label: q.label })} />
          <p className="muted">{t("summary.average", { value: formatNumber(averageStep(q.counts)) })}</p>
          {q.score !== null && <NetPromoterScore question={q} />}
        </>
      );
    case "consent":
      return <p>{t("summary.agreements", { count: q.answered })}</p>;
    case "grid":
      return (
        <>
          {q.rows.map((row) => (
            <div key={row.value}>
              <h4>{row.label}</h4>
              <Bars counts={row.counts} total={row.counts.reduce((sum, c) => sum + c.count, 0)} label={t("summary.answersToRow", { label: q.label, row: row.label })} />
            </div>
          ))}
        </>
      );
    case "ranking":
      return (
        <ol className="summary-ranks" aria-label={t("summary.optionsByPlace", { label: q.label })}>
          {q.ranks.map((r) => (
            <li key={r.value}>
              {r.label || r.value} <span className="muted">({t("summary.meanPlace", { value: formatNumber(r.meanRank) })})</span>
            </li>
          ))}
        </ol>
      );
    case "number":
      return (
        <dl className="summary-stats">
          {(["min", "median", "mean", "max"] as const).map((stat) => (
            <div key={stat}>
              <dt>{t(`summary.stat.${stat}`)}</dt>
              <dd>{formatNumber(q[stat])}</dd>
            </div>
          ))}
        </dl>
      );
    case "uploads":
      return <p>{t("summary.filesAttached", { count: q.files })}</p>;
    default:
      // Text: dates come counted by day, other text as its latest answers.
      return q.counts.length > 0 ? (
        <Columns counts={q.counts} label={t("summary.datesAnswered", { label: q.label })} />
      ) : (
        <ul className="summary-latest" aria-label={t("summary.latestAnswers", { label: q.label })}>
          {q.latest.map((text, i) => (
            <li key={i}>{text}</li>
          ))}
        </ul>
      );
  }
}

/** The score with the counts it comes from: promoters, passives and detractors (question-types.ts). */
function NetPromoterScore({ question: q }: { question: QuestionSummary }) {
  const { promotersFrom, detractorsTo } = questionTypeOf(q.type)?.promoterScore ?? { promotersFrom: 9, detractorsTo: 6 };
  const among = (from: number, to: number) => q.counts.filter((c) => Number(c.value) >= from && Number(c.value) <= to).reduce((sum, c) => sum + c.count, 0);
  const groups = [
    { name: t("summary.promoters", { from: promotersFrom }), count: among(promotersFrom, Infinity) },
    { name: t("summary.passives"), count: among(detractorsTo + 1, promotersFrom - 1) },
    { name: t("summary.detractors", { to: detractorsTo }), count: among(-Infinity, detractorsTo) },
  ];
  return (
    <dl className="summary-stats">
      <div>
        <dt>{t("blockType.NPS")}</dt>
        <dd>{formatNumber(q.score)}</dd>
      </div>
      {groups.map((g) => (
        <div key={g.name}>
          <dt>{g.name}</dt>
          <dd>{formatNumber(g.count)}</dd>
        </div>
      ))}
    </dl>
  );
}

function averageStep(counts: ValueCount[]): number | null {
  const n = counts.reduce((sum, c) => sum + c.count, 0);
  return n ? counts.reduce((sum, c) => sum + Number(c.value) * c.count, 0) / n : null;
}

function formatNumber(value: number | null): string {
  return value === null ? "—" : formatLocaleNumber(value, { maximumFractionDigits: 2 });
}

/** Horizontal bars, one per option, with the count and its share of the answers. */
export function Bars({ counts, total, label }: { counts: ValueCount[]; total: number; label: string }) {
  const most = Math.max(1, ...counts.map((c) => c.count));
  return (
    <ul className="summary-bars" aria-label={label}>
      {counts.map((c) => (
        <li key={c.value}>
          <span className="summary-bar-label">{c.label || c.value}</span>
          <span className="summary-bar-track" aria-hidden="true">
            <span className="summary-bar" style={{ width: `${(c.count / most) * 100}%` }} />
          </span>
          <span className="summary-bar-count">
            {formatNumber(c.count)} <span className="muted">({total ? Math.round((c.count / total) * 100) : 0}%)</span>
          </span>
        </li>
      ))}
    </ul>
  );
}

/** Vertical columns over steps or days, as an SVG with a title per column and a text alternative. */
export function Columns({ counts, label }: { counts: ValueCount[]; label: string }) {
  const most = Math.max(1, ...counts.map((c) => c.count));
  const width = 600;
  const height = 140;
  const gap = 2;
  // At most 60 wide, so a day or two alone stay columns rather than blocks.
  const step = Math.min(60, width / counts.length);
  // Labels under the columns only when they fit; each column's title says its value anyway.
  const labelEvery = Math.ceil(counts.length / 12);
  const top = 14;
  return (
    <figure className="summary-columns">
      <svg viewBox={`0 ${-top} ${width} ${height + 20 + top}`} role="img" aria-label={`${label}: ${counts.map((c) => `${c.label || c.value} ${c.count}`).join(", ")}`}>
        {counts.map((c, i) => {
          const h = (c.count / most) * height;
          return (
            <g key={c.value}>
              <rect x={i * step + gap / 2} y={height - h} width={Math.max(1, step - gap)} height={h} className="summary-column">
                <title>{`${c.label || c.value}: ${c.count}`}</title>
              </rect>
              {labelEvery === 1 && (
                <text x={i * step + step / 2} y={height - h - 3} textAnchor="middle" className="summary-column-label">
                  {c.count}
                </text>
              )}
              {i % labelEvery === 0 && (
                <text x={i * step + step / 2} y={height + 14} textAnchor="middle" className="summary-column-label">
                  {c.label || c.value}
                </text>
              )}
            </g>
          );
        })}
      </svg>
    </figure>
  );
}
