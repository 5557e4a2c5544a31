// Response notifications: the time from a response's completion (its submittedAt) to the notification
// mail's arrival at a real SMTP server on loopback, p50 and p99, at 20 completed responses a second for
// about 20 s (open loop: a response is sent when due, whatever the latency of the earlier ones).
//   node scripts/bench/notifications.ts [--rate 20] [--seconds 20]
import { startSmtpSink } from "../../tests/support/smtp.ts";
import { createUserWithKey, startTestSystem, type TestSystem } from "../../tests/support/system.ts";
import { quantile, sleep } from "./common.ts";

async function complete(sys: TestSystem, formId: string, n: number): Promise<void> {
  const res = await fetch(`${sys.url}/f/${formId}/responses`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ answers: { name: `respondent ${n}`, plan: n % 2 ? "pro" : "free" }, completed: true }),
  });
  await res.arrayBuffer();
  if (res.status !== 200) throw new Error(`a response was answered ${res.status}`);
}

export async function benchNotifications(opts: { rate?: number; seconds?: number } = {}) {
  const rate = opts.rate ?? 20;
  const total = rate * (opts.seconds ?? 20);
  const smtp = await startSmtpSink();
  const sys = await startTestSystem("bench_notifications", { SMTP_URL: smtp.url });
  try {
    const owner = await createUserWithKey(sys, "bench-owner@example.com");
    const form = await owner.api("POST", "/forms", {
      workspaceId: owner.workspace.id,
      name: "Bench",
      document: {
        blocks: [
          { id: "name", key: "name", type: "SHORT_TEXT", question: "Name" },
          { id: "plan", key: "plan", type: "MULTIPLE_CHOICE", question: "Plan", options: [{ id: "pro", text: "Pro" }, { id: "free", text: "Free" }] },
        ],
      },
    });
    const formId = form.body.id as string;
    await owner.api("PATCH", `/forms/${formId}`, { settings: { notifications: { owner: true } } });
    await sys.cli("form:publish", "--id", formId);

    // Warm-up: connections, caches and the JIT are not measured cold.
    await Promise.all(Array.from({ length: 20 }, (_, n) => complete(sys, formId, n)));
    while (smtp.mails.length < 20) await sleep(50);
    smtp.mails.length = 0;

    const started = performance.now();
    const inFlight = new Set<Promise<void>>();
    for (let n = 0; n < total; n++) {
      const wait = started + (n * 1000) / rate - performance.now();
      if (wait > 1) await sleep(wait);
      const p: Promise<void> = complete(sys, formId, n).finally(() => inFlight.delete(p));
      inFlight.add(p);
    }
    await Promise.all(inFlight);
    const deadline = Date.now() + 120_000;
    while (smtp.mails.length < total && Date.now() < deadline) await sleep(50);

    // Each mail links its response; the API gives that response's submittedAt.
    const submittedAt = new Map<string, number>();
    for (let cursor: string | null = ""; cursor !== null; ) {
      const page = await owner.api("GET", `/forms/${formId}/submissions?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
      for (const item of page.body.items as { id: string; submittedAt: string }[]) submittedAt.set(item.id, Date.parse(item.submittedAt));
      cursor = page.body.nextCursor;
    }
    const lags = smtp.mails
      .map((mail) => {
        const responseId = /\/responses\/([^\s/]+)/.exec(mail.text)?.[1];
        const at = responseId ? submittedAt.get(decodeURIComponent(responseId)) : undefined;
        return at === undefined ? Number.NaN : mail.arrivedAt - at;
      })
      .filter((lag) => !Number.isNaN(lag))
      .sort((a, b) => a - b);
    return {
      responsesPerSecond: rate,
      responses: total,
      mailsArrived: smtp.mails.length,
      p50Ms: Math.round(quantile(lags, 0.5)),
      p99Ms: Math.round(quantile(lags, 0.99)),
      maxMs: Math.round(lags.at(-1) ?? Number.NaN),
    };
  } finally {
    await sys.stop();
    await smtp.close();
  }
}

if (import.meta.main) {
  const arg = (flag: string, fallback: number) => {
    const i = process.argv.indexOf(flag);
    return i > 0 ? Number(process.argv[i + 1]) : fallback;
  };
  const result = await benchNotifications({ rate: arg("--rate", 20), seconds: arg("--seconds", 20) });
  console.log(`notifications ${JSON.stringify(result)}`);
}
