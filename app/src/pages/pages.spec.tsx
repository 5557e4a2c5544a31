// Components rendered to HTML (react-dom/server): what they show and how they are labelled.
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { EmptyState, ErrorState, StatusBadge } from "../components/ui.tsx";
import { blockTypes, newBlock } from "../lib/document.ts";
import type { Form } from "../types.ts";
import { Editor } from "./Editor.tsx";
import { brandingRefusal } from "./FormSettings.tsx";
import { headersOf } from "./Integrations.tsx";

const form: Form = {
  id: "f1",
  workspaceId: "w1",
  name: "Survey",
  status: "draft",
  document: { blocks: [] },
  settings: { branding: true, closedMessage: "Closed", redirectUrl: null, submitLabel: "Submit", showProgressBar: true, saveProgress: true },
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

  it("turn header rows into headers, leaving out rows without a name", () => {
    expect(headersOf([{ name: " X-Team ", value: "forms" }, { name: "", value: "lost" }])).toEqual({ "X-Team": "forms" });
  });
});

describe("the editor", () => {
  it("renders a block of every type with labelled fields and reorder buttons", () => {
    const blocks = blockTypes.map((t) => newBlock(t));
    const html = renderToStaticMarkup(
      <Editor
        form={form}
        draft={{ name: "Survey", title: "", blocks, hiddenFields: [{ name: "utm_source" }], calculatedFields: [{ name: "score", type: "NUMBER", expression: "1" }] }}
        onChange={() => {}}
        onSave={() => {}}
        saving={false}
        dirty={true}
        problems={["Block 1 (Short text): the question must not be empty."]}
      />,
    );
    expect(html.match(/data-block-index=/g)).toHaveLength(blockTypes.length);
    for (const label of ["Short text", "Checkboxes", "Rating", "Signature", "Page break", "Heading", "Paragraph"]) expect(html).toContain(label);
    // 13 questions, each with a labelled question and field name.
    expect(html.match(/>Question<\/label>/g)).toHaveLength(13);
    expect(html.match(/>Field name<\/label>/g)).toHaveLength(13);
    expect(html.match(/<legend>Options<\/legend>/g)).toHaveLength(3);
    expect(html).toMatch(/<button type="button" data-move="up" disabled="" aria-label="Move block 1 up">/);
    expect(html).toMatch(new RegExp(`aria-label="Move block ${blockTypes.length} down"[^>]*>|disabled="" aria-label="Move block ${blockTypes.length} down"`));
    expect(html).toContain('aria-label="Delete block 3"');
    expect(html).toContain("Hidden field 1 name");
    expect(html).toContain("Calculated field 1 expression");
    expect(html).toContain('role="alert"');
    expect(html).toContain(">Save</button>");
  });
});
