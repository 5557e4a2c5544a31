// Counting for insights (issue 36), off the respondent's path: the hosted routes tell an InsightsCounter
// what happened (a view, a start, a completion, a visit's questions), it adds that up in memory and sends
// the sums to submissions (RecordInsights) once a second, where they join the aggregates per form, day
// and question. Bots and prefetches count nothing. A visitor is counted once a day by an HMAC of form,
// address and user agent with the day's secret salt (submissions' GetVisitorSalt, deleted with the
// day, the way Plausible counts): the address is never sent or kept, and tomorrow's hash of the same
// visitor differs. Counts of a gateway that dies between two sends are lost (at most a second's).
import { createHash, createHmac } from "node:crypto";
import type { Client } from "@connectrpc/connect";
import type { Request } from "express";
import type { Logger } from "@formsvc/platform/logger.ts";
import type { SubmissionsService } from "@formsvc/proto/submissions/v1/submissions_pb.js";

/** User agents of crawlers, link previews, monitors, headless browsers and HTTP libraries. */
const robotAgent =
  /bot\b|bot\/|crawl|spider|slurp|archiver|facebookexternalhit|embedly|preview|headless|lighthouse|pingdom|uptime|monitor|curl|wget|python|httpclient|http-client|go-http|java\/|okhttp|axios|node-fetch|undici|^node$/i;
/** Headers a browser sends with a prefetch or prerender, which nobody may ever see. */
const purposeHeaders = ["sec-purpose", "purpose", "x-purpose", "x-moz"];

/** Whether a request is a person's browser: not a robot's user agent, not a prefetch. */
export function isPersonVisit(req: Request): boolean {
  const agent = req.get("user-agent") ?? "";
  if (!agent || robotAgent.test(agent)) return false;
  return !purposeHeaders.some((name) => /prefetch|preview|prerender/i.test(req.get(name) ?? ""));
}

/** The UTC day of `at`, as YYYY-MM-DD. */
const dayOf = (at: Date) => at.toISOString().slice(0, 10);

/** What the page's script says of a visit: the questions it showed, in order, and those answered. */
export interface VisitQuestions {
  shown: string[];
  answered: string[];
}

interface DayCounts {
  views: number;
  starts: number;
  completions: number;
}
interface QuestionCounts {
  shown: number;
  answered: number;
  dropOffs: number;
}

/** Where counts go: submissions' RPCs. */
type InsightsSink = Pick<Client<typeof SubmissionsService>, "recordInsights" | "getVisitorSalt">;

/** The most distinct rows held between two sends; past it new counts are dropped (and logged) until a send succeeds. */
const maxHeld = 50_000;

/** What the hosted routes tell of a visit: the counter, or `countNothing` in a gateway put together without insights. */
export type InsightsRecorder = Pick<InsightsCounter, "view" | "start" | "completion" | "visit">;

export const countNothing: InsightsRecorder = { view() {}, start() {}, completion() {}, visit() {} };

export class InsightsCounter {
  readonly #submissions: InsightsSink;
  readonly #logger: Logger;
  readonly #sendMs: number;
  readonly #now: () => Date;
  #days = new Map<string, DayCounts>();
  #questions = new Map<string, QuestionCounts>();
  /** Per form and day: each visitor's unsalted hash, which never leaves this process. */
  #visitors = new Map<string, Set<string>>();
  #times = new Map<string, number>();
  #salts = new Map<string, Promise<Uint8Array>>();
  #timer: NodeJS.Timeout | undefined;
  #sending: Promise<void> | undefined;
  #dropped = 0;

  constructor(deps: { submissions: InsightsSink; logger: Logger; sendMs?: number; now?: () => Date }) {
    this.#submissions = deps.submissions;
    this.#logger = deps.logger;
    this.#sendMs = deps.sendMs ?? 1_000;
    this.#now = deps.now ?? (() => new Date());
  }

  /** A person's browser loaded the form's page. */
  view(req: Request, formId: string): void {
    const day = dayOf(this.#now());
    this.#day(formId, day).views++;
    const visitor = createHash("sha256").update(`${req.ip ?? ""}\n${req.get("user-agent") ?? ""}`).digest("base64url");
    this.#row(this.#visitors, `${formId}\n${day}`, () => new Set<string>()).add(visitor);
    this.#schedule();
  }

  /** A respondent's first answer (the page's script says so; without script, their post). */
  start(formId: string): void {
    this.#day(formId, dayOf(this.#now())).starts++;
    this.#schedule();
  }

  /** A response of the hosted page was completed. */
  completion(formId: string): void {
    this.#day(formId, dayOf(this.#now())).completions++;
    this.#schedule();
  }

  /**
   * The questions of a visit that ended: completed (with its time from the page's load), or left. A
   * respondent who left stopped at the first question shown they had not answered, else the last shown.
   */
  visit(formId: string, questions: VisitQuestions, ending: { completedInSeconds: number } | "left"): void {
    const day = dayOf(this.#now());
    const answered = new Set(questions.answered);
    for (const key of questions.shown) {
      const counts = this.#question(formId, day, key);
      counts.shown++;
      if (answered.has(key)) counts.answered++;
    }
    if (ending === "left") {
      const stoppedAt = questions.shown.find((key) => !answered.has(key)) ?? questions.shown.at(-1);
      if (stoppedAt) this.#question(formId, day, stoppedAt).dropOffs++;
    } else {
      const key = `${formId}\n${day}\n${Math.round(ending.completedInSeconds)}`;
      this.#times.set(key, (this.#times.get(key) ?? 0) + 1);
    }
    this.#schedule();
  }

  /** Sends what is held now; a failed send keeps it for the next. */
  send(): Promise<void> {
    this.#sending ??= this.#sendHeld().finally(() => {
      this.#sending = undefined;
    });
    return this.#sending;
  }

  /** At stop: one last send of what is held. */
  async stop(): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.send();
  }

  #held(): number {
    return this.#days.size + this.#questions.size + this.#times.size + this.#visitors.size;
  }

  #day(formId: string, day: string): DayCounts {
    return this.#row(this.#days, `${formId}\n${day}`, () => ({ views: 0, starts: 0, completions: 0 }));
  }

  #question(formId: string, day: string, key: string): QuestionCounts {
    return this.#row(this.#questions, `${formId}\n${day}\n${key}`, () => ({ shown: 0, answered: 0, dropOffs: 0 }));
  }

  /** The held row of `key`, made when missing; past the bound a row kept nowhere (its counts are dropped). */
  #row<T>(rows: Map<string, T>, key: string, fresh: () => T): T {
    let row = rows.get(key);
    if (row) return row;
    row = fresh();
    if (this.#held() < maxHeld) rows.set(key, row);
    else this.#dropped++;
    return row;
  }

  #schedule(): void {
    this.#timer ??= setTimeout(() => {
      this.#timer = undefined;
      void this.send();
    }, this.#sendMs).unref();
  }

  #salt(day: string): Promise<Uint8Array> {
    let salt = this.#salts.get(day);
    if (!salt) {
      // Yesterday's is of no more use.
      this.#salts.clear();
      salt = this.#submissions.getVisitorSalt({ day }).then((r) => r.salt);
      salt.catch(() => this.#salts.delete(day));
      this.#salts.set(day, salt);
    }
    return salt;
  }

  async #sendHeld(): Promise<void> {
    const [days, questions, visitors, times] = [this.#days, this.#questions, this.#visitors, this.#times];
    if (days.size + questions.size + visitors.size + times.size === 0) return;
    this.#days = new Map();
    this.#questions = new Map();
    this.#visitors = new Map();
    this.#times = new Map();
    const split = (key: string) => key.split("\n");
    try {
      const hashed = await Promise.all(
        [...visitors].map(async ([key, seen]) => {
          const [formId, day] = split(key);
          const salt = await this.#salt(day);
          return [...seen].map((visitor) => ({ formId, day, visitor: createHmac("sha256", salt).update(`${formId}\n${visitor}`).digest("base64url").slice(0, 32) }));
        }),
      );
      await this.#submissions.recordInsights({
        days: [...days].map(([key, c]) => {
          const [formId, day] = split(key);
          return { formId, day, views: BigInt(c.views), starts: BigInt(c.starts), completions: BigInt(c.completions) };
        }),
        questions: [...questions].map(([id, c]) => {
          const [formId, day, key] = split(id);
          return { formId, day, key, shown: BigInt(c.shown), answered: BigInt(c.answered), dropOffs: BigInt(c.dropOffs) };
        }),
        visitors: hashed.flat(),
        completionTimes: [...times].map(([id, count]) => {
          const [formId, day, seconds] = split(id);
          return { formId, day, seconds: BigInt(seconds), count: BigInt(count) };
        }),
      });
      if (this.#dropped) this.#logger.warn({ dropped: this.#dropped }, "insights counts dropped: submissions took none for too long");
      this.#dropped = 0;
    } catch (err) {
      this.#logger.warn({ err }, "insights not recorded: kept for the next send");
      this.#keep(days, questions, visitors, times);
      this.#schedule();
    }
  }

  /** Puts back the sums of a failed send, under what came meanwhile. */
  #keep(days: Map<string, DayCounts>, questions: Map<string, QuestionCounts>, visitors: Map<string, Set<string>>, times: Map<string, number>): void {
    for (const [key, c] of days) {
      const now = this.#days.get(key);
      this.#days.set(key, now ? { views: now.views + c.views, starts: now.starts + c.starts, completions: now.completions + c.completions } : c);
    }
    for (const [key, c] of questions) {
      const now = this.#questions.get(key);
      this.#questions.set(key, now ? { shown: now.shown + c.shown, answered: now.answered + c.answered, dropOffs: now.dropOffs + c.dropOffs } : c);
    }
    for (const [key, seen] of visitors) this.#visitors.set(key, new Set([...(this.#visitors.get(key) ?? []), ...seen]));
    for (const [key, n] of times) this.#times.set(key, (this.#times.get(key) ?? 0) + n);
  }
}
