import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { defaultSettings, inputBlockTypes, normalizeDocument, type FormDocument } from "@formsvc/form-document";
import { documentPages } from "@formsvc/form-document";
import { answersFromFields, problemsByQuestion } from "./form-fields.ts";
import { pageTexts } from "./page-messages.ts";
import { escapeHtml } from "./html-text.ts";
import {
  jsonForScript,
  renderClosedPage,
  renderErrorPage,
  renderFormPage,
  renderNotFoundPage,
  renderThankYouPage,
  type FormPageInput,
} from "./render-form.ts";

const everyBlock: FormDocument = normalizeDocument({
  title: "Every block",
  blocks: [
    { type: "HEADING", text: "Welcome & hello" },
    { type: "PARAGRAPH", text: "Line one\nLine two" },
    { type: "SHORT_TEXT", key: "short", question: "Short text", required: true, description: "Your name" },
    { type: "LONG_TEXT", key: "long", question: "Long text" },
    { type: "EMAIL", key: "email", question: "Email" },
    { type: "NUMBER", key: "number", question: "Number", min: 1, max: 9 },
    { type: "PHONE", key: "phone", question: "Phone" },
    { type: "URL", key: "url", question: "Website" },
    { type: "DATE", key: "date", question: "Date" },
    { type: "TIME", key: "time", question: "Time" },
    { type: "PAGE_BREAK" },
    { type: "MULTIPLE_CHOICE", key: "plan", question: "Plan", required: true, options: [{ id: "free", text: "Free" }, { id: "pro", text: "Pro" }] },
    { type: "CHECKBOXES", key: "topics", question: "Topics", options: [{ id: "t1", text: "One" }, { id: "t2", text: "Two" }] },
    { type: "DROPDOWN", key: "size", question: "Size", options: [{ id: "s", text: "Small" }, { id: "l", text: "Large" }] },
    { type: "MULTI_SELECT", key: "langs", question: "Languages", max: 2, options: [{ id: "en", text: "English" }, { id: "fr", text: "French" }, { id: "de", text: "German" }] },
    { type: "RANKING", key: "rank", question: "Rank them", options: [{ id: "r1", text: "Price" }, { id: "r2", text: "Speed" }] },
    { type: "RATING", key: "rating", question: "Rating", max: 4 },
    { type: "MATRIX", key: "grid", question: "Grid", rows: [{ id: "m1", text: "Food" }, { id: "m2", text: "Music" }], columns: [{ id: "c1", text: "Bad" }, { id: "c2", text: "Good" }] },
    { type: "LINEAR_SCALE", key: "scale", question: "Agree?", min: 0, max: 4, minLabel: "Not at all", maxLabel: "Fully" },
    { type: "NPS", key: "nps", question: "Recommend us?" },
    { type: "CONSENT", key: "terms", question: "Terms", text: "I agree to the [terms & conditions](https://forms.example.com/t?a=1&b=2) <b>now</b>" },
    { type: "FILE", key: "cv", question: "CV", required: true },
    { type: "SIGNATURE", key: "sig", question: "Signature" },
  ],
  hiddenFields: [{ name: "utm_source" }, { name: "ref" }],
}).document;

const urls = { base: "/f", script: "/f/assets/form-page.js?v=abc", branding: "https://forms.example.com/" };

function page(overrides: Partial<FormPageInput> = {}): string {
  return renderFormPage({
    formId: "form_1",
    name: "Sign-up",
    version: 3,
    document: everyBlock,
    settings: { ...defaultSettings },
    showBranding: true,
    hidden: {},
    urls,
    ...overrides,
  });
}

/** Every `id="..."` of the page. */
function ids(html: string): Set<string> {
  return new Set([...html.matchAll(/\sid="([^"]+)"/g)].map((m) => m[1]));
}

/** The tags of every form control except hidden inputs and buttons. */
function controls(html: string): string[] {
  return [...html.matchAll(/<(input|select|textarea)\b[^>]*>/g)].map((m) => m[0]).filter((tag) => !/type="hidden"/.test(tag));
}

describe("renderFormPage", () => {
  it("renders every block type, each control with a label for it", () => {
    const html = page();
    const present = ids(html);
    const labelled = new Set([...html.matchAll(/<label[^>]*\sfor="([^"]+)"/g)].map((m) => m[1]));
    const found = controls(html);
    assert.ok(found.length >= 16, `found ${found.length} controls`);
    for (const tag of found) {
      const id = /\sid="([^"]+)"/.exec(tag)?.[1];
      assert.ok(id, `control without id: ${tag}`);
      assert.ok(labelled.has(id), `control without <label for>: ${tag}`);
    }
    for (const target of labelled) assert.ok(present.has(target), `label for a missing id ${target}`);
    // Every input type shows up with its question.
    for (const type of inputBlockTypes) assert.match(html, new RegExp(`data-type="${type}"`), type);
    assert.match(html, /<h2>Welcome &amp; hello<\/h2>/);
    assert.match(html, /<p>Line one<br>Line two<\/p>/);
    assert.match(html, /<input type="email" id="q-[^"]+" name="email"/);
    assert.match(html, /<input type="number"[^>]*step="any" min="1" max="9"/);
    assert.match(html, /<input type="tel"/);
    assert.match(html, /<input type="url"/);
    assert.match(html, /<input type="date"/);
    assert.match(html, /<textarea[^>]*name="long"/);
    assert.match(html, /<select[^>]*name="size"[^>]*><option value="">Choose…<\/option><option value="s">Small<\/option>/);
    assert.equal((html.match(/type="radio"[^>]*name="rating"/g) ?? []).length, 4);
    assert.match(html, /<input type="time" id="q-[^"]+" name="time"/);
    // A matrix: a table, a radio per cell named by key and row, labelled "row: column".
    assert.match(html, /<thead><tr><td><\/td><th scope="col">Bad<\/th><th scope="col">Good<\/th><\/tr><\/thead>/);
    assert.match(html, /<tr><th scope="row">Music<\/th><td><input type="radio" id="(q-[^"]+-m2-c1)" name="grid\.m2" value="c1" data-row="m2"><label class="hf-sr" for="\1">Music: Bad<\/label><\/td>/);
    // A ranking: a labelled select per place, every option in each.
    assert.match(html, /<label for="(q-[^"]+-place-1)">Place 1<\/label><select id="\1" name="rank"><option value="">Choose…<\/option><option value="r1">Price<\/option><option value="r2">Speed<\/option><\/select>/);
    assert.match(html, /<label for="(q-[^"]+-place-2)">Place 2<\/label><select id="\1" name="rank">/);
    // A multi-select: a closed list of checkboxes, its search shown by the script.
    assert.match(html, /<details class="hf-multi">\n<summary>Choose… <span class="hf-multi-count" aria-live="polite"><\/span><\/summary>/);
    assert.match(html, /<input type="search" id="(q-[^"]+-search)" class="hf-multi-search" autocomplete="off" hidden>/);
    assert.deepEqual([...html.matchAll(/type="checkbox"[^>]*name="langs" value="(\w+)"/g)].map((m) => m[1]), ["en", "fr", "de"]);
    // Scales: every step from min to max, the ends' meanings in the spoken labels and once for the eye.
    assert.deepEqual([...html.matchAll(/type="radio"[^>]*name="scale" value="(\d+)"/g)].map((m) => m[1]), ["0", "1", "2", "3", "4"]);
    assert.match(html, /<span class="hf-sr">0 of 4, Not at all<\/span>/);
    assert.match(html, /<span class="hf-sr">4 of 4, Fully<\/span>/);
    assert.match(html, /<p class="hf-scale-ends" aria-hidden="true"><span>Not at all<\/span><span>Fully<\/span><\/p>/);
    assert.equal((html.match(/type="radio"[^>]*name="nps"/g) ?? []).length, 11);
    assert.match(html, /<span class="hf-sr">0 of 10, Not at all likely<\/span>/);
    assert.match(html, /<span class="hf-sr">10 of 10, Extremely likely<\/span>/);
    // Consent: one box, its text escaped but for the link.
    assert.match(html, /<input type="checkbox" id="[^"]+" name="terms" value="true">/);
    assert.match(
      html,
      /I agree to the <a href="https:\/\/forms.example.com\/t\?a=1&amp;b=2" target="_blank" rel="noopener noreferrer">terms &amp; conditions<\/a> &lt;b&gt;now&lt;\/b&gt;<\/label>/,
    );
    assert.match(html, /<input type="file"[^>]*multiple[^>]*data-upload/);
    assert.doesNotMatch(html, /<input type="file"[^>]*\sname=/, "files are uploaded by the script, never posted");
    assert.match(html, /<canvas class="hf-pad"[^>]*role="img"[^>]*aria-label="Signature pad/);
    assert.match(html, /<button type="button" class="hf-pad-clear">Clear signature<\/button>/);
    assert.match(html, /type your name to sign instead/);
  });

  it("marks required questions with text and aria-required, and has an alert region per question", () => {
    const html = page();
    assert.match(html, /<label class="hf-label" for="q-[^"]+">Short text <span class="hf-required">\(required\)<\/span><\/label>/);
    assert.match(html, /<input type="text" id="q-[^"]+" name="short" value="" required aria-required="true"/);
    assert.match(html, /<fieldset[^>]*data-key="plan"[^>]*role="radiogroup" aria-required="true"/);
    assert.match(html, /<legend class="hf-label">Plan <span class="hf-required">\(required\)<\/span><\/legend>/);
    assert.match(html, /<input type="file"[^>]*aria-required="true"/);
    assert.doesNotMatch(html, /name="long"[^>]*aria-required/, "optional questions are not marked");
    const alerts = html.match(/class="hf-error" id="[^"]+" role="alert"/g) ?? [];
    assert.equal(alerts.length, inputBlockTypes.length, "one error line per question");
    assert.match(html, /id="hf-summary" role="alert"/);
  });

  it("groups choices in fieldsets with legends, one option per label", () => {
    const html = page();
    for (const key of ["plan", "topics", "rating", "sig"]) {
      assert.match(html, new RegExp(`<fieldset[^>]*data-key="${key}"[^>]*>\\n<legend`), key);
    }
    assert.match(html, /<input type="radio" id="(q-[^"]+-free)" name="plan" value="free" required><label for="\1">Free<\/label>/);
    assert.match(html, /<input type="checkbox" id="(q-[^"]+-t2)" name="topics" value="t2"><label for="\1">Two<\/label>/);
  });

  it("splits pages at PAGE_BREAK, the first one current, and shows the submit label", () => {
    const html = page({ settings: { ...defaultSettings, submitLabel: "Send it <now>" } });
    assert.equal(documentPages(everyBlock).length, 2);
    assert.match(html, /<section class="hf-page hf-current" data-page="0"[^>]*aria-label="Page 1 of 2">/);
    assert.match(html, /<section class="hf-page" data-page="1"[^>]*aria-label="Page 2 of 2">/);
    assert.match(html, /<button type="submit" class="hf-submit" id="hf-submit">Send it &lt;now&gt;<\/button>/);
    assert.match(html, /<form id="hf-form" class="hf-form" method="post" action="\/f\/form_1"/);
    assert.match(html, /<input type="hidden" name="_version" value="3">/);
    assert.match(html, /<script src="\/f\/assets\/form-page.js\?v=abc"><\/script>/);
    assert.match(html, /<noscript>.*needs JavaScript/, "file questions explain they need JavaScript");
    assert.match(html, /<meta name="viewport" content="width=device-width, initial-scale=1">/);
    // The script's messages (a text asking for an address "starting with https://") are not links.
    const markup = html.replace(/<script type="application\/json" id="hf-config">.*?<\/script>/s, "");
    assert.doesNotMatch(markup, /https?:\/\/(?!forms\.example\.com)/, "nothing loaded from elsewhere (no CDN, no fonts)");
  });

  it("escapes question text, options, descriptions and titles", () => {
    const evil = "<script>alert('x')</script>";
    const doc = normalizeDocument({
      title: `T ${evil}`,
      blocks: [
        { type: "HEADING", text: evil },
        { type: "SHORT_TEXT", key: "q", question: `Q ${evil}`, description: `D ${evil}`, placeholder: `"><script>` },
        { type: "MULTIPLE_CHOICE", key: "c", question: "C", options: [{ id: "o1", text: evil }] },
      ],
      hiddenFields: [{ name: "h" }],
    }).document;
    const html = page({ document: doc, name: evil, hidden: { h: `"><script>alert(1)</script>` }, formError: evil });
    const scripts = html.match(/<script\b[^>]*>/g) ?? [];
    assert.deepEqual(scripts, ['<script type="application/json" id="hf-config">', '<script src="/f/assets/form-page.js?v=abc">']);
    assert.match(html, /<title>T &lt;script&gt;alert\(&#39;x&#39;\)&lt;\/script&gt;<\/title>/);
    assert.match(html, /Q &lt;script&gt;alert\(&#39;x&#39;\)&lt;\/script&gt;/);
    assert.match(html, /D &lt;script&gt;/);
    assert.match(html, /placeholder="&quot;&gt;&lt;script&gt;"/);
    assert.match(html, /value="&quot;&gt;&lt;script&gt;alert\(1\)&lt;\/script&gt;"/);
  });

  it("keeps hidden field values from the query string in hidden inputs", () => {
    const html = page({ hidden: { utm_source: "newsletter", other: "ignored" } });
    assert.match(html, /<input type="hidden" name="_hidden.utm_source" value="newsletter">/);
    assert.match(html, /<input type="hidden" name="_hidden.ref" value="">/);
    assert.doesNotMatch(html, /ignored/);
  });

  it("shows branding unless showBranding is false", () => {
    assert.match(page(), /<footer class="hf-branding"><a href="https:\/\/forms.example.com\/">Made with formsvc<\/a><\/footer>/);
    assert.doesNotMatch(page({ showBranding: false }), /Made with formsvc/);
  });

  it("carries the page's settings to the script as inert JSON", () => {
    const html = page({ settings: { ...defaultSettings, redirectUrl: "https://example.com/</script><script>x()</script>", saveProgress: false } });
    const json = /<script type="application\/json" id="hf-config">(.*?)<\/script>/s.exec(html)?.[1] ?? "";
    assert.doesNotMatch(json, /<\/script>/);
    const config = JSON.parse(json);
    assert.equal(config.formId, "form_1");
    assert.equal(config.version, 3);
    assert.equal(config.pages, 2);
    assert.equal(config.saveProgress, false);
    assert.equal(config.showProgressBar, true);
    assert.equal(config.redirectUrl, "https://example.com/</script><script>x()</script>");
    assert.equal(config.responsesUrl, "/f/form_1/responses");
    assert.equal(config.uploadsUrl, "/f/form_1/uploads");
    assert.deepEqual(config.hiddenFields, ["utm_source", "ref"]);
    assert.equal(jsonForScript("\u2028<&>"), '"\\u2028\\u003c\\u0026\\u003e"');
  });

  it("gives the script the rules it evaluates, without SET actions: their values are the server's alone", () => {
    const document: FormDocument = {
      title: "Orders",
      blocks: [
        { id: "b_qty", key: "qty", type: "NUMBER", question: "How many?" },
        { id: "b_gift", key: "gift", type: "SHORT_TEXT", question: "Gift message" },
      ],
      calculatedFields: [
        { name: "code", type: "TEXT", expression: "'NONE'" },
        { name: "tier", type: "TEXT", expression: "'standard'" },
      ],
      logic: [
        {
          when: { conditions: [{ question: "b_qty", operator: "GREATER_THAN", value: 10 }] },
          then: [{ action: "SHOW", block: "b_gift" }, { action: "SET", field: "code", value: "BULK-SECRET-25" }],
        },
        { when: { conditions: [{ question: "b_qty", operator: "GREATER_THAN", value: 100 }] }, then: [{ action: "SET", field: "tier", value: "wholesale" }] },
      ],
    };
    const html = page({ document });
    const config = JSON.parse(/id="hf-config">(.*?)<\/script>/s.exec(html)![1]);
    assert.deepEqual(config.logic.logic, [{ when: document.logic![0].when, then: [{ action: "SHOW", block: "b_gift" }] }]);
    assert.deepEqual(config.logic.blocks.map((b: { id: string }) => b.id), ["b_qty", "b_gift"]);
    assert.doesNotMatch(html, /BULK-SECRET-25|wholesale/);
  });

  it("shows posted values and errors again, with a summary linking to the questions", () => {
    const html = page({
      values: { short: "Ada <L>", plan: "pro", topics: ["t1", "t2"], size: "l", rating: "3", long: "x</textarea>" },
      errors: { email: "Enter a valid email address." },
    });
    assert.match(html, /name="short" value="Ada &lt;L&gt;"/);
    assert.match(html, /name="plan" value="pro" checked/);
    assert.match(html, /name="topics" value="t1" checked/);
    assert.match(html, /name="topics" value="t2" checked/);
    assert.match(html, /<option value="l" selected>Large<\/option>/);
    assert.match(html, /name="rating" value="3" checked/);
    assert.match(html, />x&lt;\/textarea&gt;<\/textarea>/);
    assert.match(html, /name="email"[^>]*aria-invalid="true"/);
    assert.match(html, /role="alert">Enter a valid email address.<\/p>/);
    assert.match(html, /<li><a href="#q-[^"]+-field">Email: Enter a valid email address.<\/a><\/li>/);
  });
});

describe("other pages", () => {
  const info = { name: "Sign-up", document: everyBlock, showBranding: true, brandingUrl: "/" };

  it("a closed form shows its message and takes nothing", () => {
    const html = renderClosedPage({ ...info, closedMessage: "We are full <sorry>" });
    assert.match(html, /We are full &lt;sorry&gt;/);
    assert.match(html, /<h1>Every block<\/h1>/);
    assert.doesNotMatch(html, /<(form|input|select|textarea)\b/);
    assert.match(html, /Made with formsvc/);
    assert.doesNotMatch(renderClosedPage({ ...info, showBranding: false, closedMessage: "x" }), /Made with formsvc/);
  });

  it("thank-you, not-found and error pages", () => {
    assert.match(renderThankYouPage(info), /Thank you!/);
    assert.doesNotMatch(renderThankYouPage(info), /<section[^>]*hidden/);
    const notFound = renderNotFoundPage();
    assert.match(notFound, /<h1>Form not found<\/h1>/);
    assert.match(notFound, /noindex/);
    assert.match(renderErrorPage(429), /<h1>Too many requests<\/h1>\n<p>You have sent too many requests\./);
    assert.match(renderErrorPage(503, pageTexts("de")), /<html lang="de" dir="ltr">[\s\S]*<h1>Etwas ist schiefgelaufen<\/h1>/);
    assert.match(renderNotFoundPage(pageTexts("he")), /<html lang="he" dir="rtl">[\s\S]*<h1>הטופס לא נמצא<\/h1>/);
    assert.equal(escapeHtml(`<a href="x">'&'</a>`), "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
  });
});

describe("theme and thank-you screen", () => {
  const info = { name: "Sign-up", document: everyBlock, showBranding: true, brandingUrl: "/" };
  const theme = { accentColor: "#1a7f37", backgroundColor: "#fff8c5", font: "serif" as const, buttonStyle: "pill" as const, logo: "data:image/png;base64,iVBORw0KGgo=", colorScheme: "light" as const };
  const thankYou = { title: "See you <there>", text: "Doors open at 9.\nBring a pen.", buttonLabel: "Back to the site", buttonUrl: "https://example.com/?a=1&b=2", redirectSeconds: 5 };

  it("sets the theme as CSS variables the stylesheet reads, and shows the logo", () => {
    const html = page({ settings: { ...defaultSettings, theme } });
    const vars = /<style id="hf-theme">:root\{(.*?)\}<\/style>/.exec(html)?.[1] ?? "";
    assert.match(vars, /--hf-accent:#1a7f37;--hf-on-accent:#ffffff;--hf-bg:#fff8c5;--hf-text:#1f2328;--hf-font:Charter, "Bitstream Charter"[^;]*, serif;--hf-radius:999px/);
    assert.match(html, /\.hf-submit,\.hf-next,\.hf-button\{background:var\(--hf-accent\)/);
    assert.match(html, /<div class="hf-logo"><img src="data:image\/png;base64,iVBORw0KGgo=" alt=""><\/div>/);
    assert.match(page(), /--hf-accent:#0969da;[^<]*--hf-bg:#f6f7f9/, "the default theme without one");
    assert.doesNotMatch(page(), /hf-logo"/);
    const odd = page({ settings: { ...defaultSettings, theme: { ...theme, accentColor: "red;}</style>", font: "x" as never } } });
    assert.match(odd, /--hf-accent:#0969da;[^<]*--hf-font:system-ui/, "a value that is not a colour or a listed font never reaches the style");
    assert.match(renderClosedPage({ ...info, theme, closedMessage: "Closed" }), /--hf-accent:#1a7f37/);
  });

  it("draws a dark page with the dark palette, and an automatic one that follows prefers-color-scheme", () => {
    const style = (colorScheme: "light" | "dark" | "auto", backgroundColor: string) =>
      /<style id="hf-theme">(.*?)<\/style>/.exec(page({ settings: { ...defaultSettings, theme: { ...theme, backgroundColor, colorScheme } } }))![1];
    const dark = style("dark", "#161b22");
    assert.match(dark, /^:root\{--hf-accent:#1a7f37;--hf-on-accent:#ffffff;--hf-bg:#161b22;--hf-text:#e6edf3;.*color-scheme:dark;--hf-muted:#9198a1;--hf-card:#161b22;.*--hf-link:#79c0ff\}$/);
    const light = style("light", "#fff8c5");
    assert.match(light, /^:root\{[^}]*--hf-text:#1f2328;[^}]*color-scheme:light;[^}]*--hf-card:#ffffff;[^}]*--hf-link:#1a7f37\}$/, "links take the accent in light");
    const auto = style("auto", "#fff8c5");
    assert.ok(auto.startsWith(`${light}@media (prefers-color-scheme:dark){:root{`), auto);
    assert.match(auto, /@media \(prefers-color-scheme:dark\)\{:root\{--hf-accent:#1a7f37;--hf-on-accent:#ffffff;--hf-bg:#0d1117;--hf-text:#e6edf3;[^}]*color-scheme:dark;/);
    // No colour of the stylesheet is fixed but the signature pad's (its drawing is an image on white).
    const sheet = /<style>([\s\S]*?)<\/style>/.exec(page())![1];
    assert.deepEqual(sheet.match(/#[0-9a-f]{3,6}\b/gi), ["#fff"]);
  });

  it("shows the form's thank-you screen (hidden until the script completes) with its button and redirect", () => {
    const html = page({ settings: { ...defaultSettings, thankYou } });
    assert.match(html, /<section class="hf-card hf-thanks" id="hf-thanks" tabindex="-1" hidden>\n<h2 id="hf-thanks-title">See you &lt;there&gt;<\/h2>/);
    assert.match(html, /<p id="hf-thanks-text">Doors open at 9.<br>Bring a pen.<\/p>/);
    assert.match(html, /<a class="hf-button" id="hf-thanks-button" href="https:\/\/example.com\/\?a=1&amp;b=2" target="_top">Back to the site<\/a>/);
    assert.match(html, /You will be taken to <a href="[^"]+">example.com<\/a> in 5 seconds\./);
    const config = JSON.parse(/id="hf-config">(.*?)<\/script>/s.exec(html)![1]);
    assert.deepEqual(config.thanksRedirect, { seconds: 5, url: "https://example.com/?a=1&b=2" });
    assert.doesNotMatch(html, /http-equiv="refresh"/, "the form page itself never moves on");
  });

  it("the plain post's thank-you page shows the same screen and moves on with a meta refresh", () => {
    const html = renderThankYouPage({ ...info, theme, thankYou });
    assert.match(html, /<h2 id="hf-thanks-title">See you &lt;there&gt;<\/h2>/);
    assert.match(html, /<meta http-equiv="refresh" content="5;url=https:\/\/example.com\/\?a=1&amp;b=2">/);
    assert.match(html, /--hf-accent:#1a7f37/);
    const plain = renderThankYouPage({ ...info, thankYou: { ...thankYou, redirectSeconds: null } });
    assert.doesNotMatch(plain, /http-equiv="refresh"|You will be taken/);
    assert.match(plain, /id="hf-thanks-button"/);
    assert.match(renderThankYouPage(info), /<h2 id="hf-thanks-title">Thank you!<\/h2>\n<p id="hf-thanks-text">Your response has been recorded.<\/p>/);
  });
});

describe("plain form posts", () => {
  it("turns fields into answers: text, numbers, option ids, checkbox arrays, hidden fields", () => {
    const posted = answersFromFields(everyBlock, {
      _version: "3",
      "_hidden.utm_source": "newsletter",
      "_hidden.nope": "x",
      short: "  Ada  ",
      long: "",
      number: "4.5",
      plan: "pro",
      topics: ["t1", "t2"],
      size: "s",
      rating: "3",
      time: "14:30",
      scale: "0",
      nps: "10",
      terms: "true",
      langs: ["en", "de"],
      rank: ["r2", "r1"],
      "grid.m1": "c2",
    });
    assert.deepEqual(posted.answers, { short: "Ada", number: 4.5, plan: "pro", topics: ["t1", "t2"], size: "s", rating: 3, langs: ["en", "de"], rank: ["r2", "r1"], grid: { m1: "c2" }, time: "14:30", scale: 0, nps: 10, terms: true });
    assert.deepEqual(posted.hidden, { utm_source: "newsletter" });
    assert.equal(posted.version, 3);
    assert.deepEqual(posted.errors, { cv: "This question needs JavaScript: please enable it and try again." });
  });

  it("names missing required questions and bad numbers", () => {
    const posted = answersFromFields(everyBlock, { number: "lots", topics: "t1" });
    assert.equal(posted.errors.short, "This question is required.");
    assert.equal(posted.errors.plan, "This question is required.");
    assert.equal(posted.errors.number, "Enter a number.");
    assert.deepEqual(posted.answers.topics, ["t1"]);
    assert.equal(posted.version, 0);
  });

  it("checks the answers by submissions' rules, every problem at once", () => {
    const posted = answersFromFields(everyBlock, {
      short: "Ada",
      email: "not-an-email",
      number: "12",
      plan: "gold",
      rating: "5",
      url: "example.com",
      time: "25:00",
      scale: "5",
      nps: "11",
      langs: ["en", "fr", "de"],
      rank: ["r2", ""],
    });
    assert.deepEqual(posted.errors, {
      email: "Must be an email address",
      time: "Must be a time (HH:MM, 24 hours)",
      scale: "Must be a whole number from 0 to 4",
      nps: "Must be a whole number from 0 to 10",
      langs: "Takes at most 2 option ids",
      rank: "Must rank every option (2), not 1",
      number: "Must be at most 9",
      plan: '"gold" is not an option of this question',
      rating: "Must be a whole number from 1 to 4",
      url: "Must be a URL starting with http:// or https://",
      cv: "This question needs JavaScript: please enable it and try again.",
    });
  });

  it("needs a required consent's box ticked", () => {
    const doc = normalizeDocument({ blocks: [{ type: "CONSENT", key: "terms", question: "Terms", text: "I agree", required: true }] }).document;
    assert.deepEqual(answersFromFields(doc, {}).errors, { terms: "This question is required." });
    assert.deepEqual(answersFromFields(doc, { terms: "true" }), { answers: { terms: true }, hidden: {}, version: 0, errors: {} });
  });

  it("shows the problems a service names by key next to their questions, and no others", () => {
    const problems = [
      { key: "email", message: "this address has already answered" },
      { key: "hidden:utm_source", message: "must be at most 2000 characters" },
      { key: "gone", message: "is not a question of this form" },
      { key: "email", message: "a second problem" },
    ];
    assert.deepEqual(problemsByQuestion(everyBlock, problems), { email: "This address has already answered" });
  });
});
