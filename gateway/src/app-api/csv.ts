// CSV of a form's responses (RFC 4180, CRLF line ends, a UTF-8 byte order mark so spreadsheets read
// accents right). Text that a spreadsheet would run as a formula is prefixed with a quote (OWASP's CSV
// injection advice), and so is every part of it a separator starts (a spreadsheet that splits on ; or tab,
// whatever the quotes say, would otherwise run `=1+1` of `x;=1+1;y`); cells holding ; are quoted too, since
// spreadsheets in many locales split on it.
import { displayValue, type AnswerJson } from "./display.ts";

export interface CsvColumn {
  key: string;
  label: string;
  type?: string;
  /** A matrix's row: the column holds the answer's part for that row. */
  row?: string;
}

/**
 * The columns with a matrix of `document` (the current version) split into a column per row, labelled
 * `Question: Row`, so each statement of a Likert grid is a column a spreadsheet can count.
 */
export function rowColumns(columns: CsvColumn[], document: unknown): CsvColumn[] {
  const blocks = (document as { blocks?: { key?: string; type?: string; rows?: { id?: string; text: string }[] }[] } | null)?.blocks ?? [];
  const rowsOf = new Map(blocks.filter((b) => b.type === "MATRIX" && b.key && Array.isArray(b.rows)).map((b) => [b.key!, b.rows!]));
  return columns.flatMap((c) => {
    const rows = c.type === "MATRIX" ? rowsOf.get(c.key) : undefined;
    return rows ? rows.map((row) => ({ ...c, label: `${c.label}: ${row.text}`, row: row.id ?? "" })) : [c];
  });
}

export interface CsvSubmission {
  id: string;
  completed: boolean;
  version: number;
  createdAt: string | null;
  submittedAt: string | null;
  answers: Record<string, AnswerJson>;
}

const formulaStart = /^[=+\-@\t\r]/;
/** A formula's first character right after a separator a spreadsheet may split on. */
const formulaAfterSeparator = /([,;\t])(?=[=+\-@])/g;

/**
 * One cell. A number (an answer stored as a number, the form version) is written as it is, so -3 stays
 * a number a spreadsheet can add up; text is defused whenever it starts like a formula, even when it
 * looks numeric: the respondent typed it, and "+4412345" or "-0" then keeps its sign as typed instead
 * of becoming a number, while no judgement of what is "just a number" can be fooled.
 */
export function csvCell(value: string | number): string {
  if (typeof value === "number") return String(value);
  // A separator leading the text is the first character's business (formulaStart).
  const parts = value.replace(formulaAfterSeparator, (separator, _sep, offset: number) => (offset === 0 ? separator : `${separator}'`));
  const text = formulaStart.test(parts) ? `'${parts}` : parts;
  return /[",;\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

function csvLine(cells: (string | number)[]): string {
  return cells.map(csvCell).join(",") + "\r\n";
}

/**
 * The export's rows: the header, then the rows of each page as it comes (so an export of any size holds
 * one page at a time), each page's rows together; `optionsOf` gives the option texts of a version. A
 * number answer shown as itself stays a number cell. The CSV and XLSX exports write them.
 */
export async function* responseRows(
  columns: CsvColumn[],
  pages: AsyncIterable<CsvSubmission[]>,
  optionsOf: (version: number) => Promise<Map<string, string>>,
): AsyncGenerator<(string | number)[][]> {
  yield [["Response ID", "Status", "Submitted at", "Started at", "Form version", ...columns.map((c) => c.label)]];
  for await (const page of pages) {
    const rows: (string | number)[][] = [];
    for (const sub of page) {
      const options = await optionsOf(sub.version);
      const cells = columns.map((c) => {
        const answer = sub.answers[c.key];
        if (!answer) return "";
        if (answer.files) return answer.files.map((f) => `${f.name} ${f.url}`).join("\n");
        if (c.row !== undefined) {
          const chosen = (answer.value as Record<string, string | string[]> | null)?.[c.row] ?? [];
          return ([] as string[]).concat(chosen).map((id) => options.get(id) ?? id).join(", ");
        }
        const shown = displayValue(answer, options);
        // An option id that happens to be a number shows its text.
        return typeof answer.value === "number" && shown === String(answer.value) ? answer.value : shown;
      });
      rows.push([sub.id, sub.completed ? "completed" : "partial", sub.submittedAt ?? "", sub.createdAt ?? "", sub.version, ...cells]);
    }
    yield rows;
  }
}

/** The CSV of `responseRows`, a chunk per page, after a UTF-8 byte order mark. */
export async function* responsesCsv(...args: Parameters<typeof responseRows>): AsyncGenerator<string> {
  yield "\uFEFF";
  for await (const rows of responseRows(...args)) yield rows.map(csvLine).join("");
}
