// Insights: the form's funnel over a date range (GET /forms/:id/insights, read from aggregates kept as
// respondents come): views → starts → completions with their rates, where respondents who started left
// (drop-offs per question, over the times it was shown), the median time to complete, and views by day.
import { useId, useState } from "react";
import { get } from "../api.ts";
import { ErrorState, Loading, useLoad } from "../components/ui.tsx";
import type { Form, FormInsights } from "../types.ts";
import { Bars, Columns, summaryQuery } from "./Summary.tsx";

const percent = (part: number, whole: number) => (whole ? `${Math.round((part / whole) * 100)}%` : "—");

/** Seconds as minutes and seconds (`1 min 24 s`), hours past an hour. */
export function formatDuration(seconds: number | null): string {
  if (seconds === null) return "—";
  const s = Math.round(seconds);
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min${s % 60 ? ` ${s % 60} s` : ""}`;
  const minutes = Math.round((s % 3600) / 60);
  return `${Math.floor(s / 3600)} h${minutes ? ` ${minutes} min` : ""}`;
}

export function InsightsView({ form }: { form: Form }) {
  const [since, setSince] = useState("");
  const [until, setUntil] = useState("");
  const ids = { since: useId(), until: useId() };
  const query = summaryQuery(since, until);
  const insights = useLoad(() => get<FormInsights>(`/forms/${form.id}/insights?${query}`), [form.id, query]);
  return (
    <div className="summary">
      <div className="toolbar">
        <div className="field field-inline">
          <label htmlFor={ids.since}>From</label>
          <input id={ids.since} type="date" value={since} max={until || undefined} onChange={(e) => setSince(e.target.value)} />
        </div>
        <div className="field field-inline">
          <label htmlFor={ids.until}>To</label>
          <input id={ids.until} type="date" value={until} min={since || undefined} onChange={(e) => setUntil(e.target.value)} />
        </div>
        <button type="button" className="button" onClick={insights.reload}>
          Refresh
        </button>
      </div>
      {insights.loading && !insights.data ? (
        <Loading what="Counting visits" />
      ) : insights.error && !insights.data ? (
        <ErrorState message={insights.error} onRetry={insights.reload} />
      ) : (
        <InsightsCharts insights={insights.data!} />
      )}
    </div>
  );
}

function InsightsCharts({ insights: i }: { insights: FormInsights }) {
  const ids = { funnel: useId(), dropOffs: useId(), days: useId() };
  const funnel = [
    { value: "views", label: "Views", count: i.views },
    { value: "starts", label: "Starts", count: i.starts },
    { value: "completions", label: "Completions", count: i.completions },
  ];
  const asked = i.questions.filter((q) => q.shown > 0);
  return (
    <>
      <section className="card summary-card" aria-labelledby={ids.funnel}>
        <h3 id={ids.funnel}>Funnel</h3>
        <Bars counts={funnel} total={i.views} label="Funnel" />
        <dl className="summary-stats">
          <div>
            <dt>Visitors</dt>
            <dd>{i.visitors}</dd>
          </div>
          <div>
            <dt>Started of views</dt>
            <dd>{percent(i.starts, i.views)}</dd>
          </div>
          <div>
            <dt>Completed of starts</dt>
            <dd>{i.completionRate === null ? "—" : `${Math.round(i.completionRate * 100)}%`}</dd>
          </div>
          <div>
            <dt>Median time to complete</dt>
            <dd>{formatDuration(i.medianSecondsToComplete)}</dd>
          </div>
        </dl>
        <p className="muted">Counted without cookies or stored addresses; robots and prefetches are left out.</p>
      </section>
      <section className="card summary-card" aria-labelledby={ids.dropOffs}>
        <h3 id={ids.dropOffs}>Drop-off per question</h3>
        {asked.length === 0 ? (
          <p className="muted">No respondent has started in this range.</p>
        ) : (
          <ul className="summary-bars" aria-label="Drop-off per question">
            {asked.map((q) => (
              <li key={q.key} data-question={q.key}>
                <span className="summary-bar-label">{q.label}</span>
                <span className="summary-bar-track" aria-hidden="true">
                  <span className="summary-bar summary-bar-drop" style={{ width: percent(q.dropOffs, q.shown) }} />
                </span>
                <span className="summary-bar-count">
                  {q.dropOffs} left of {q.shown} shown <span className="muted">({percent(q.dropOffs, q.shown)})</span>
                </span>
              </li>
            ))}
          </ul>
        )}
      </section>
      <section className="card summary-card" aria-labelledby={ids.days}>
        <h3 id={ids.days}>By day</h3>
        {i.days.length === 0 ? (
          <p className="muted">Nobody has opened the form in this range.</p>
        ) : (
          <>
            <p className="muted">Views</p>
            <Columns counts={i.days.map((d) => ({ value: d.date, label: d.date, count: d.views }))} label="Views by day" />
            <p className="muted">Completions</p>
            <Columns counts={i.days.map((d) => ({ value: d.date, label: d.date, count: d.completions }))} label="Completions by day" />
          </>
        )}
      </section>
    </>
  );
}
