// Insights: the form's funnel over a date range (GET /forms/:id/insights, read from aggregates kept as
// respondents come): views → starts → completions with their rates, where respondents who started left
// (drop-offs per question, over the times it was shown), the median time to complete, and views by day.
import { useId } from "react";
import { get } from "../api.ts";
import { ErrorState, Loading, useLoad } from "../components/ui.tsx";
import { formatNumber } from "../lib/format.ts";
import type { Form, FormInsights } from "../types.ts";
import { Bars, Columns, DateRangeFields, summaryQuery, useDateRange } from "./Summary.tsx";
import { t } from "../i18n/messages.ts";

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
  const range = useDateRange();
  const query = summaryQuery(range.since, range.until);
  const insights = useLoad(() => get<FormInsights>(`/forms/${form.id}/insights?${query}`), [form.id, query]);
  return (
    <div className="summary">
      <div className="toolbar">
        <DateRangeFields range={range} />
        <button type="button" className="button" onClick={insights.reload}>
          {t("responses.refresh")}
        </button>
      </div>
      {insights.loading && !insights.data ? (
        <Loading what={t("insights.loading")} />
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
    { value: "views", label: t("insights.views"), count: i.views },
    { value: "starts", label: t("insights.starts"), count: i.starts },
    { value: "completions", label: t("insights.completions"), count: i.completions },
  ];
  const asked = i.questions.filter((q) => q.shown > 0);
  return (
    <>
      <section className="card summary-card" aria-labelledby={ids.funnel}>
        <h3 id={ids.funnel}>{t("insights.funnel")}</h3>
        <Bars counts={funnel} total={i.views} label={t("insights.funnel")} />
        <dl className="summary-stats">
          <div>
            <dt>{t("insights.visitors")}</dt>
            <dd>{formatNumber(i.visitors)}</dd>
          </div>
          <div>
            <dt>{t("insights.startedOfViews")}</dt>
            <dd>{percent(i.starts, i.views)}</dd>
          </div>
          <div>
            <dt>{t("insights.completedOfStarts")}</dt>
            <dd>{i.completionRate === null ? "—" : `${Math.round(i.completionRate * 100)}%`}</dd>
          </div>
          <div>
            <dt>{t("insights.median")}</dt>
            <dd>{formatDuration(i.medianSecondsToComplete)}</dd>
          </div>
        </dl>
        <p className="muted">{t("insights.privacy")}</p>
      </section>
      <section className="card summary-card" aria-labelledby={ids.dropOffs}>
        <h3 id={ids.dropOffs}>{t("insights.dropOff")}</h3>
        {asked.length === 0 ? (
          <p className="muted">{t("insights.noStarts")}</p>
        ) : (
          <ul className="summary-bars" aria-label={t("insights.dropOff")}>
            {asked.map((q) => (
              <li key={q.key} data-question={q.key}>
                <span className="summary-bar-label">{q.label}</span>
                <span className="summary-bar-track" aria-hidden="true">
                  <span className="summary-bar summary-bar-drop" style={{ width: percent(q.dropOffs, q.shown) }} />
                </span>
                <span className="summary-bar-count">
                  {t("insights.leftOf", { left: q.dropOffs, shown: q.shown })} <span className="muted">({percent(q.dropOffs, q.shown)})</span>
                </span>
              </li>
            ))}
          </ul>
        )}
      </section>
      <section className="card summary-card" aria-labelledby={ids.days}>
        <h3 id={ids.days}>{t("insights.byDay")}</h3>
        {i.days.length === 0 ? (
          <p className="muted">{t("insights.noViews")}</p>
        ) : (
          <>
            <p className="muted">{t("insights.views")}</p>
            <Columns counts={i.days.map((d) => ({ value: d.date, label: d.date, count: d.views }))} label={t("insights.viewsByDay")} />
            <p className="muted">{t("insights.completions")}</p>
            <Columns counts={i.days.map((d) => ({ value: d.date, label: d.date, count: d.completions }))} label={t("insights.completionsByDay")} />
          </>
        )}
      </section>
    </>
  );
}
