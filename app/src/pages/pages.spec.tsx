// Components rendered to HTML (react-dom/server): what they show and how they are labelled.
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { ApiError, csrfCookieName } from "../api.ts";
import { EmptyState, ErrorState, StatusBadge } from "../components/ui.tsx";
import { blockTypes, newBlock } from "../lib/document.ts";
import { choiceBlockTypes, inputBlockTypes } from "@formsvc/form-document/block-types";
import { formatBytes } from "../lib/format.ts";
import type { Form } from "../types.ts";
import { passwordRefusal } from "./Auth.tsx";
import { Editor } from "./Editor.tsx";
import type { SaveState } from "./Editor.tsx";
import { brandingRefusal, localDateTimeInput } from "./FormSettings.tsx";
import { headersOf } from "./Integrations.tsx";
import { LanguagesCard } from "./LanguagesCard.tsx";

const form: Form = {
  id: "f1",
  workspaceId: "w1",
  name: "Survey",
  status: "draft",
  document: { blocks: [] },
  settings: { language: "en", languages: [], branding: true, closedMessage: "Closed", redirectUrl: null, submitLabel: "Submit", showProgressBar: true, saveProgress: true, oneQuestionAtATime: false, closesAt: null, responseLimit: null, deleteResponsesAfterDays: null, honeypot: true, submissionsPerMinute: null, embedOrigins: null, requireSingleUseLink: false, proofOfWork: null, password: false, requireEmailVerification: false, captcha: null, notifications: { owner: false, members: [], receiptQuestionId: null }, theme: { accentColor: "#0969da", backgroundColor: "#f6f7f9", font: "system", buttonStyle: "rounded", logo: null, colorScheme: "light" }, thankYou: { title: "Thank you!", text: "", buttonLabel: null, buttonUrl: null, redirectSeconds: null } },
  version: 1,
  responseCount: 0,
  createdAt: "2026-01-01T00:00:00Z",
  updatedAt: "2026-01-01T00:00:00Z",
  trashedAt: null,
};

describe("small components", () => {
  it("show states with the right roles", () => {
    expect(renderToStaticMarkup(<StatusBadge status="published" />)).toBe('<span class="badge badge-published">Published</span>');
    expect(renderToStaticMarkup(<ErrorState message="boom" />)).toContain('role="alert"');
    expect(renderToStaticMarkup(<EmptyState title="No forms yet" />)).toContain("<h3>No forms yet</h3>");
  });

  it("explain a branding refusal by the plan", () => {
    expect(brandingRefusal("free")).toMatch(/Free plan, which does not include it/);
    expect(brandingRefusal("free")).toMatch(/workspace:set-plan/);
  });

  it("show the bytes a form's files hold as people read them", () => {
    expect([0, 1, 512, 1536, 12.34 * 1024 * 1024, 1024 ** 3].map(formatBytes)).toEqual(["0 bytes", "1 byte", "512 bytes", "1.5 KB", "12.3 MB", "1 GB"]);
  });

  it("show a closing date in the browser's time zone, and round-trip it", () => {
    expect(localDateTimeInput(null)).toBe("");
    const shown = localDateTimeInput("2027-01-31T17:00:00Z");
    expect(shown).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}$/);
    expect(new Date(shown).toISOString()).toBe("2027-01-31T17:00:00.000Z");
  });

  it("show the form's language and each translation's completeness, naming what it misses", () => {
    const document = { title: "Party", blocks: [{ id: "name", key: "name", type: "SHORT_TEXT" as const, question: "Your name" }] };
    const languages: Form["settings"]["languages"] = [{ language: "de", texts: { title: "Fest" } }, { language: "fr", texts: { title: "Fête", "name.question": "Votre nom" } }];
    const settings = { ...form.settings, closedMessage: "This form is closed.", language: "en", languages };
    const html = renderToStaticMarkup(<LanguagesCard id="s" document={document} settings={settings} onLanguage={() => {}} />);
    expect(html).toContain('value="en"');
    expect(html).toContain("<strong>de</strong>: 1 of 2 texts translated; missing name.question (“Your name”). The form cannot be published until it is complete.");
    expect(html).toContain("<strong>fr</strong>: 2 of 2 texts translated</li>");
  });

  it("turn header rows into headers, leaving out rows without a name", () => {
    expect(headersOf([{ name: " X-Team ", value: "forms" }, { name: "", value: "lost" }])).toEqual({ "X-Team": "forms" });
  });
});

const editorProps = {
  form,
  onChange: () => {},
  onSave: () => {},
  saveState: { kind: "problems" } as SaveState,
  problems: ["Block 1 (Short text): the question must not be empty."],
  canUndo: true,
  canRedo: false,
  onUndo: () => {},
  onRedo: () => {},
  onResolveConflict: () => {},
};

describe("the editor", () => {
  it("draws a block of every type on the form, its texts in place and labelled, the selected block's settings under it", () => {
    const blocks = blockTypes.map((t) => newBlock(t));
    const draft = { name: "Survey", title: "", blocks, hiddenFields: [{ name: "utm_source" }], calculatedFields: [{ name: "score", type: "NUMBER" as const, expression: "1" }] };
    const html = renderToStaticMarkup(<Editor {...editorProps} draft={draft} initialSelected={blocks[0].id} />);
    expect(html.match(/data-block-index=/g)).toHaveLength(blockTypes.length);
    for (const label of ["Short text", "Checkboxes", "Rating", "Signature", "Page break"]) expect(html).toContain(label);
    // Every question's text in place, labelled; a heading's and a paragraph's too.
    expect(html.match(/aria-label="Question"/g)).toHaveLength(inputBlockTypes.length);
    expect(html).toContain('aria-label="Heading text"');
    expect(html).toContain('aria-label="Paragraph text"');
    expect(html).toContain('aria-label="Text to agree with"');
    // Options in place, each labelled by its block.
    const choiceIndexes = blocks.flatMap((b, i) => ((choiceBlockTypes as readonly string[]).includes(b.type) ? [i] : []));
    for (const i of choiceIndexes) expect(html).toContain(`aria-label="Option 1 of block ${i + 1}"`);
    // Only the selected block shows its settings: the answer key (not "Field name"), required, moves.
    expect(html.match(/>Answer key<\/label>/g)).toHaveLength(1);
    expect(html).not.toContain("Field name");
    expect(html.match(/aria-label="Settings of block \d+"/g)).toEqual(['aria-label="Settings of block 1"']);
    expect(html).toMatch(/<button type="button" data-move="up" disabled="" aria-label="Move block 1 up">/);
    expect(html).toContain('aria-label="Delete block 1"');
    expect(html).not.toContain('aria-label="Delete block 3"');
    // The insert line, a combobox; undo on, redo off; the problems; hidden and calculated fields folded.
    expect(html).toMatch(/<input id="[^"]+" class="inserter-input" role="combobox" aria-label="Type \/ to insert a block"/);
    expect(html).toMatch(/<button type="button" aria-keyshortcuts="Control\+Z Meta\+Z">/);
    expect(html).toMatch(/<button type="button" disabled="" aria-keyshortcuts="Control\+Shift\+Z Meta\+Shift\+Z Control\+Y">/);
    expect(html).toContain("Hidden field 1 name");
    expect(html).toContain("Calculated field 1 formula");
    expect(html).toContain('role="alert"');
    expect(html).toContain('data-state="problems"');
    expect(html).toContain(">Save</button>");
  });

  it("shows each type's own settings when its block is selected", () => {
    const blocks = blockTypes.map((t) => newBlock(t));
    const draft = { name: "Survey", title: "", blocks, hiddenFields: [], calculatedFields: [] };
    const shown = blocks.map((b) => renderToStaticMarkup(<Editor {...editorProps} draft={draft} initialSelected={b.id} />)).join("\n");
    for (const label of ["Fewest choices", "Most choices", "Lowest step", "Highest step", "Lowest step means", "Highest step means", "Smallest answer", "Steps"]) expect(shown).toContain(`>${label}</label>`);
    expect(shown).toContain("<legend>Rows</legend>");
    expect(shown).toContain("<legend>Columns</legend>");
  });

  it("names a calculated field's formula problem at the field as it is typed, before saving", () => {
    const html = renderToStaticMarkup(
      <Editor
        {...editorProps}
        saveState={{ kind: "unsaved" }}
        problems={[]}
        draft={{
          name: "Survey",
          title: "",
          blocks: [],
          hiddenFields: [],
          calculatedFields: [
            { name: "fine", type: "NUMBER", expression: "1.0" },
            { name: "costly", type: "NUMBER", expression: "l.all(a, l.all(b, l.all(c, a + b + c > 0)))" },
          ],
        }}
      />,
    );
    expect(html.match(/aria-invalid="true"/g)).toHaveLength(1);
    expect(html).toContain("The formula runs 3 comprehensions inside one another; at most 2.");
  });
});

describe("sign up", () => {
  it("shows the server's reason for refusing a password at the field, and nothing for other errors", () => {
    const reason = "password is too easy to guess: This is one of the ten most used passwords. Add another word or two; uncommon words are better.";
    expect(passwordRefusal(new ApiError(400, reason))).toBe(`P${reason.slice(1)}`);
    expect(passwordRefusal(new ApiError(400, "password must be at least 8 characters"))).toBe("Password must be at least 8 characters");
    expect(passwordRefusal(new ApiError(400, "body.password: is required"))).toBe("Password: is required");
    expect(passwordRefusal(new ApiError(400, "email must be a valid email address"))).toBeUndefined();
    expect(passwordRefusal(new ApiError(409, "password"))).toBeUndefined();
    expect(passwordRefusal(new Error("password"))).toBeUndefined();
  });

  it("reads the CSRF cookie by the name the server gives it: __Host- on https", () => {
    expect(csrfCookieName("https:")).toBe("__Host-formsvc_csrf");
    expect(csrfCookieName("http:")).toBe("formsvc_csrf");
  });
});
