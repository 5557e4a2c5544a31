// A form's completed responses summed up per question. Read from the counts kept as responses are
// written (summary-counts.ts), so it costs the same at any number of responses; a search (and a question
// whose answers were given under a type of another tally) is counted by Postgres in one statement over the
// stored answers instead, which the counts must equal. What each question gets follows from its type's
// answer shape (form-document's question types), never from type names.
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { EntityManager } from "@mikro-orm/core";
import type { FormDocument, InputBlock } from "@formsvc/form-document";
import { isInputBlock, questionTypeOf, questionTypes, scaleOf } from "@formsvc/form-document/block-types";
import { buildSummaryCounts, readSummaryCounts, tallyOfType, type Tally } from "./summary-counts.ts";
import type { OptionRankSchema, QuestionSummarySchema, RowCountsSchema, SummarizeResponsesResponseSchema, ValueCountSchema } from "@formsvc/proto/submissions/v1/submissions_pb.js";

type Summary = MessageInitShape<typeof SummarizeResponsesResponseSchema>;
type QuestionSummary = MessageInitShape<typeof QuestionSummarySchema>;
type ValueCount = MessageInitShape<typeof ValueCountSchema>;
type OptionRank = MessageInitShape<typeof OptionRankSchema>;
type RowCounts = MessageInitShape<typeof RowCountsSchema>;

export interface SummaryFilter {
  formId: string;
  since?: Date;
  until?: Date;
  /** Case-insensitive text an answer of the response contains; empty: all. */
  search?: string;
}

/** The longest search text a summary takes. */
export const maxSearchLength = 200;

/** How many of a text question's latest answers a summary lists, and how much of each. */
export const latestTextCount = 10;
const latestTextChars = 500;

function tallyOf(block: InputBlock): Tally {
  return tallyOfType(block.type)!;
}

/** `text` as a LIKE pattern matching it literally anywhere. */
function containing(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

interface Row {
  kind: "responses" | "day" | "answered" | "count" | "rank" | "cell" | "numbers" | "latest";
  key: string | null;
  value: string | null;
  n: string;
  min: number | null;
  median: number | null;
  max: number | null;
  mean: number | null;
}

/**
 * The summary of the form's completed responses matching `filter`, per input block of `document` (the
 * current version; answers filed under keys it no longer has are left out). `scan` counts the responses
 * themselves even without a search (the reference the counts are tested against).
 */
export async function summarizeResponses(em: EntityManager, responsesTable: string, document: FormDocument, filter: SummaryFilter, scan = false): Promise<Summary> {
  const blocks = document.blocks.filter(isInputBlock).filter((b) => b.key);
  const counted = scan || filter.search?.trim() ? undefined : await countedRows(em, responsesTable, blocks, filter);
  return summaryOf(blocks, counted ?? (await scannedRows(em, responsesTable, blocks, filter)));
}

/** The rows of the counts kept, as the scan gives them; undefined when a question's answers were tallied otherwise than its type is now. */
async function countedRows(em: EntityManager, responsesTable: string, blocks: InputBlock[], filter: SummaryFilter): Promise<Row[] | undefined> {
  await buildSummaryCounts(em, filter.formId, responsesTable);
  const counted = await readSummaryCounts(em, responsesTable, {
    formId: filter.formId,
    since: filter.since,
    until: filter.until,
    keys: blocks.map((b) => b.key!),
    latestKeys: blocks.filter((b) => tallyOf(b) === "latest").map((b) => b.key!),
    latestCount: latestTextCount,
    latestChars: latestTextChars,
  });
  const tallies = new Map(blocks.map((b) => [b.key!, tallyOf(b)]));
  const row = (kind: Row["kind"], key: string | null, value: string | null, n: string, mean: number | null = null): Row => ({ kind, key, value, n, min: null, median: null, max: null, mean });
  const rows: Row[] = [];
  const numbers = new Map<string, { value: number; n: number }[]>();
  const means = new Map<string, number>();
  let responses = 0n;
  for (const r of counted) {
    if (r.kind === "answered" && r.value !== tallies.get(r.key)) return undefined;
    if (r.kind === "responses") {
      responses += BigInt(r.n);
      rows.push(row("day", null, r.day, r.n));
    } else if (r.kind === "answered") rows.push(row("answered", r.key, r.total, r.n));
    else if (r.kind === "number") numbers.set(r.key, [...(numbers.get(r.key) ?? []), { value: Number(r.value), n: Number(r.n) }]);
    else if (r.kind === "mean") means.set(r.key, r.mean!);
    else if (r.kind === "latest") rows.push(row("latest", r.key, r.value, r.n));
    else rows.push(row(r.kind, r.key, r.value, r.n, r.mean));
  }
  rows.push(row("responses", null, null, String(responses)));
  for (const [key, values] of numbers) {
    values.sort((a, b) => a.value - b.value);
    rows.push({ ...row("numbers", key, null, "0", means.get(key)), min: values[0]!.value, median: medianOf(values), max: values.at(-1)!.value });
  }
  return rows;
}

/** As Postgres's percentile_cont(0.5) over the values, each `n` times: the middle one, or halfway between the middle two. */
function medianOf(sorted: { value: number; n: number }[]): number {
  const all = sorted.reduce((sum, v) => sum + v.n, 0);
  const at = (index: number) => {
    for (const v of sorted) {
      if (index < v.n) return v.value;
      index -= v.n;
    }
    throw new Error("median out of range");
  };
  const middle = (all - 1) / 2;
  const low = at(Math.floor(middle));
  return Number.isInteger(middle) ? low : low + (at(Math.ceil(middle)) - low) * 0.5;
}

/** The summary's rows counted over the responses matching `filter`, in one statement. */
async function scannedRows(em: EntityManager, responsesTable: string, blocks: InputBlock[], filter: SummaryFilter): Promise<Row[]> {
  const keysOf = (tally: Tally) => JSON.stringify(blocks.filter((b) => tallyOf(b) === tally).map((b) => b.key));
  const search = filter.search?.trim() ?? "";
  // A choice answer holds option ids: a search for an option's text finds the ids of the options having it.
  const optionIds = search
    ? blocks.flatMap((b) => ("options" in b ? b.options : [])).filter((o) => o.id && o.text.toLowerCase().includes(search.toLowerCase()))
    : [];
  const idPatterns = JSON.stringify(optionIds.map((o) => `%"${o.id!.replace(/[\\%_]/g, (c) => `\\${c}`)}"%`));

  return (await em.getConnection().execute(
    `with "matching" as materialized (
       select "answers", "submitted_at" from ${responsesTable} r
        where "form_id" = ? and "completed"
          and (?::timestamptz is null or "submitted_at" >= ?::timestamptz)
          and (?::timestamptz is null or "submitted_at" < ?::timestamptz)
          and (?::text = '' or exists (
            select 1 from jsonb_each(r."answers") a
             where (a.value->'value') #>> '{}' ilike ?
                or (a.value->'value')::text like any(array(select jsonb_array_elements_text(?::jsonb)))))
     ),
     "given" as materialized (
       select a.key, a.value as "answer", a.value->'value' as "value", m."submitted_at"
         from "matching" m, jsonb_each(m."answers") a
        where jsonb_typeof(a.value->'value') <> 'null' and a.key in (select jsonb_array_elements_text(?::jsonb))
     )
     select 'responses' as "kind", null as "key", null as "value", count(*)::text as "n", null::float8 as "min", null::float8 as "median", null::float8 as "max", null::float8 as "mean" from "matching"
     union all
     select 'day', null, to_char("submitted_at" at time zone 'UTC', 'YYYY-MM-DD'), count(*)::text, null, null, null, null from "matching" group by 3
     union all
     select 'answered', "key", coalesce(sum(jsonb_array_length(coalesce("answer"->'files', '[]'::jsonb))), 0)::text, count(*)::text, null, null, null, null
       from "given" group by "key"
     union all
     select 'count', g."key", v.value #>> '{}', count(*)::text, null, null, null, null
       from "given" g, jsonb_array_elements(case jsonb_typeof(g."value") when 'array' then g."value" else jsonb_build_array(g."value") end) v
      where g."key" in (select jsonb_array_elements_text(?::jsonb))
      group by g."key", v.value #>> '{}'
     union all
     select 'rank', g."key", v.value #>> '{}', count(*)::text, null, null, null, avg(v.place)::float8
       from "given" g, jsonb_array_elements(g."value") with ordinality v(value, place)
      where g."key" in (select jsonb_array_elements_text(?::jsonb)) and jsonb_typeof(g."value") = 'array'
      group by g."key", v.value #>> '{}'
     union all
     -- A matrix's cells: the value is [row id, column id] as JSON.
     select 'cell', g."key", jsonb_build_array(r.key, v.value #>> '{}')::text, count(*)::text, null, null, null, null
       from "given" g, jsonb_each(case jsonb_typeof(g."value") when 'object' then g."value" else '{}'::jsonb end) r,
            jsonb_array_elements(case jsonb_typeof(r.value) when 'array' then r.value else jsonb_build_array(r.value) end) v
      where g."key" in (select jsonb_array_elements_text(?::jsonb))
      group by g."key", r.key, v.value #>> '{}'
     union all
     select 'numbers', "key", null, count(*)::text, min(("value" #>> '{}')::float8), percentile_cont(0.5) within group (order by ("value" #>> '{}')::float8),
            -- The mean over numeric: avg(float8) also sums the squares, which overflow at answers of 1e155 and
            -- up (two answers of 1e200 and -1e200 made the summary fail for good).
            max(("value" #>> '{}')::float8), avg(("value" #>> '{}')::numeric)::float8
       from "given" where "key" in (select jsonb_array_elements_text(?::jsonb)) and jsonb_typeof("value") = 'number' group by "key"
     union all
     select 'latest', "key", "text", "rank"::text, null, null, null, null from (
       select "key", left("value" #>> '{}', ${latestTextChars}) as "text", row_number() over (partition by "key" order by "submitted_at" desc) as "rank"
         from "given" where "key" in (select jsonb_array_elements_text(?::jsonb))
     ) t where "rank" <= ${latestTextCount}`,
    [
      filter.formId,
      filter.since ?? null,
      filter.since ?? null,
      filter.until ?? null,
      filter.until ?? null,
      search,
      containing(search),
      idPatterns,
      JSON.stringify(blocks.map((b) => b.key)),
      keysOf("counts"),
      keysOf("ranks"),
      keysOf("cells"),
      keysOf("numbers"),
      keysOf("latest"),
    ],
    "all",
  )) as Row[];
}

function summaryOf(blocks: InputBlock[], rows: Row[]): Summary {
  const byKind = (kind: Row["kind"], key?: string) => rows.filter((r) => r.kind === kind && (key === undefined || r.key === key));
  const count = (r: Row | undefined) => BigInt(r?.n ?? 0);

  const questions = blocks.map((block) => {
    const key = block.key!;
    const answered = byKind("answered", key)[0];
    const tally = tallyOf(block);
    const summary: QuestionSummary = {
      key,
      type: block.type,
      label: block.fieldName?.trim() || block.question,
      shape: questionTypes[block.type].answer,
      answered: count(answered),
    };
    if (tally === "counts") summary.counts = countsOf(block, byKind("count", key));
    const promoters = questionTypeOf(block.type)?.promoterScore;
    if (promoters && count(answered) > 0n) summary.score = promoterScoreOf(summary.counts ?? [], promoters);
    if (tally === "numbers") {
      const numbers = byKind("numbers", key)[0];
      if (numbers) Object.assign(summary, { min: numbers.min!, median: numbers.median!, max: numbers.max!, mean: numbers.mean! });
    }
    if (tally === "latest") {
      summary.latest = byKind("latest", key)
        .sort((a, b) => Number(a.n) - Number(b.n))
        .map((r) => r.value ?? "");
    }
    if (tally === "ranks") summary.ranks = ranksOf(block, byKind("rank", key));
    if (tally === "cells") summary.rows = rowCountsOf(block, byKind("cell", key));
    if (tally === "files") summary.files = BigInt(answered?.value ?? 0);
    return summary;
  });

  const days = byKind("day")
    .map((r) => ({ value: r.value!, label: "", count: count(r) }))
    .sort((a, b) => a.value.localeCompare(b.value));
  return { responses: count(byKind("responses")[0]), questions, submittedByDay: days };
}

/**
 * The counts of a choice, scale, consent or date question: every option of the current version (in its
 * order, zero when nobody chose it) then any other id answered; every step of a scale; the days answered,
 * oldest first; `true` for consents.
 */
/** A matrix's rows of the current version, in order, each with the count of every column (zero when nobody chose it). */
function rowCountsOf(block: InputBlock, rows: Row[]): RowCounts[] {
  if (block.type !== "MATRIX") return [];
  const cell = (row: unknown, column: unknown) => JSON.stringify([row, column]);
  const counted = new Map(rows.map((r) => [cell(...(JSON.parse(r.value ?? "[]") as [string, string])), BigInt(r.n)]));
  return block.rows.map((row) => ({
    value: row.id ?? "",
    label: row.text,
    counts: block.columns.map((column) => ({ value: column.id ?? "", label: column.text, count: counted.get(cell(row.id, column.id)) ?? 0n })),
  }));
}

/** A ranking's options by their mean place (1: first), best first; options nobody ranked last, without a mean. */
function ranksOf(block: InputBlock, rows: Row[]): OptionRank[] {
  const means = new Map(rows.map((r) => [r.value ?? "", r.mean]));
  const ranks: OptionRank[] = ("options" in block ? block.options : []).filter((o) => o.id).map((o) => ({ value: o.id!, label: o.text, meanRank: means.get(o.id!) ?? undefined }));
  return ranks.sort((a, b) => (a.meanRank ?? Infinity) - (b.meanRank ?? Infinity));
}

function promoterScoreOf(counts: ValueCount[], { promotersFrom, detractorsTo }: { promotersFrom: number; detractorsTo: number }): number {
  let all = 0n;
  let promoters = 0n;
  let detractors = 0n;
  for (const { value, count = 0n } of counts) {
    const step = Number(value);
    all += BigInt(count);
    if (step >= promotersFrom) promoters += BigInt(count);
    if (step <= detractorsTo) detractors += BigInt(count);
  }
  return all === 0n ? 0 : (Number(promoters - detractors) * 100) / Number(all);
}

function countsOf(block: InputBlock, rows: Row[]): ValueCount[] {
  const counted = new Map(rows.map((r) => [r.value ?? "", BigInt(r.n)]));
  const take = (value: string, label: string): ValueCount => {
    const count = counted.get(value) ?? 0n;
    counted.delete(value);
    return { value, label, count };
  };
  const listed: ValueCount[] = [];
  if ("options" in block) for (const option of block.options) if (option.id) listed.push(take(option.id, option.text));
  if (questionTypes[block.type].answer === "steps") {
    const { min, max } = scaleOf(block);
    for (let step = min; step <= max; step++) listed.push(take(String(step), String(step)));
  }
  const rest = [...counted.keys()].sort((a, b) => a.localeCompare(b, "en", { numeric: true })).map((value) => take(value, ""));
  return [...listed, ...rest];
}
