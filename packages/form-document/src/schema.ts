// The form document, version 1 (see DESIGN.md "Form document, version 1").
// Plain zod (no transforms): the gateway validates request bodies with these schemas and
// generates the OpenAPI document from them with `z.toJSONSchema`.
import { z } from "zod";

export * from "./block-types.ts";
import {
  choiceBlockTypes,
  defaultRatingMax,
  scaleOf,
  expressionLimits,
  fieldNamePattern,
  idPattern,
  inputBlockTypes,
  keyPattern,
  limits,
  type ChoiceBlockType,
  type InputBlockType,
  type LayoutBlockType,
} from "./block-types.ts";
import { calculatedFieldProblems } from "./expression-cost.ts";
import { logicActions, logicOperators } from "./logic.ts";
import { logicLimits } from "./logic-check.ts";

const notBlank = /\S/;

const idSchema = z
  .string()
  .regex(idPattern, "must be 1 to 64 letters, digits, '_' or '-'")
  .describe("Stable identifier; assigned by the server when absent.");

const keySchema = z
  .string()
  .regex(keyPattern, "must start with a letter and have at most 64 letters, digits or '_'")
  .describe(
    "Where answers to this question are filed in a submission. Assigned by the server when absent; " +
      "once assigned it never changes (a different value sent later is ignored).",
  );

const inputBase = {
  id: idSchema.optional(),
  key: keySchema.optional(),
  question: z
    .string()
    .min(1)
    .max(limits.question)
    .regex(notBlank, "must not be blank")
    .describe("The question text shown to respondents. May recall an earlier question's answer or a hidden field as `{{key}}` (`{{key|fallback}}`): see FormDocument."),
  fieldName: z
    .string()
    .max(limits.fieldName)
    .optional()
    .describe("Column name in the Submissions table; the question text is used when empty."),
  description: z.string().max(limits.description).optional().describe("Text under the question (line breaks kept); may recall as `question` does."),
  required: z.boolean().optional().describe("Whether an answer is needed to complete the response (default false)."),
  placeholder: z.string().max(limits.placeholder).optional(),
};

export const optionSchema = z.strictObject({
  id: idSchema.optional(),
  text: z.string().min(1).max(limits.optionText).regex(notBlank, "must not be blank"),
});

const simpleInputBlock = <T extends InputBlockType>(type: T) =>
  z.strictObject({ ...inputBase, type: z.literal(type) });

const choiceBlock = <T extends ChoiceBlockType>(type: T) =>
  z.strictObject({
    ...inputBase,
    type: z.literal(type),
    options: z
      .array(optionSchema)
      .min(1, "needs at least one option")
      .max(limits.options)
      .describe("The choices; an answer is the id of an option (an array of ids for CHECKBOXES and MULTI_SELECT, every id in order for RANKING)."),
  });

const multiSelectBlock = z
  .strictObject({
    ...choiceBlock("MULTI_SELECT").shape,
    min: z.number().int().min(1).max(limits.options).optional().describe("The fewest options an answer may name."),
    max: z.number().int().min(1).max(limits.options).optional().describe("The most options an answer may name."),
  })
  .superRefine((block, ctx) => {
    if (block.min !== undefined && block.max !== undefined && block.max < block.min) {
      ctx.addIssue({ code: "custom", path: ["max"], message: "must not be less than min" });
    }
    if (block.min !== undefined && block.min > block.options.length) {
      ctx.addIssue({ code: "custom", path: ["min"], message: `must not be more than the ${block.options.length} options` });
    }
  })
  .describe("A searchable list that takes several options: the answer is an array of option ids, between `min` and `max` of them.");

const matrixBlock = z
  .strictObject({
    ...inputBase,
    type: z.literal("MATRIX"),
    rows: z.array(optionSchema).min(1, "needs at least one row").max(limits.matrixLines).describe("The statements, one answer each."),
    columns: z.array(optionSchema).min(1, "needs at least one column").max(limits.matrixLines).describe("The choices every row offers."),
    multiple: z.boolean().optional().describe("Whether a row takes several columns (default false)."),
  })
  .describe(
    'A grid (Likert): the answer is `{"<rowId>": "<columnId>"}`, or `{"<rowId>": ["<columnId>", …]}` with `multiple`; ' +
      "a required matrix needs an answer in every row.",
  );

const numberBlock = z
  .strictObject({
    ...inputBase,
    type: z.literal("NUMBER"),
    min: z.number().optional().describe("Smallest accepted answer."),
    max: z.number().optional().describe("Largest accepted answer."),
  })
  .superRefine((block, ctx) => {
    if (block.min !== undefined && block.max !== undefined && block.max < block.min) {
      ctx.addIssue({ code: "custom", path: ["max"], message: "must not be less than min" });
    }
  });

const ratingBlock = z.strictObject({
  ...inputBase,
  type: z.literal("RATING"),
  max: z
    .number()
    .int()
    .min(2)
    .max(10)
    .optional()
    .describe(`Number of steps of the scale, 2 to 10 (default ${defaultRatingMax}).`),
});

const linearScaleBlock = z
  .strictObject({
    ...inputBase,
    type: z.literal("LINEAR_SCALE"),
    min: z.literal([0, 1]).optional().describe(`The lowest step, 0 or 1 (default ${scaleOf({ type: "LINEAR_SCALE" }).min}).`),
    max: z
      .number()
      .int()
      .min(2)
      .max(10)
      .optional()
      .describe(`The highest step, 2 to 10 (default ${scaleOf({ type: "LINEAR_SCALE" }).max}).`),
    minLabel: z.string().max(limits.scaleLabel).optional().describe("What the lowest step means (`Not likely`)."),
    maxLabel: z.string().max(limits.scaleLabel).optional().describe("What the highest step means (`Very likely`)."),
  })
  .describe("An opinion scale: the answer is a whole number from `min` to `max`.");

const npsBlock = simpleInputBlock("NPS").describe(
  "Net Promoter Score: how likely the respondent is to recommend, a whole number from 0 to 10.",
);

const consentBlock = z
  .strictObject({
    ...inputBase,
    type: z.literal("CONSENT"),
    text: z
      .string()
      .min(1)
      .max(limits.text)
      .regex(notBlank, "must not be blank")
      .describe("The text beside the checkbox; `[words](https://…)` shows a link (http and https only), everything else is plain text."),
  })
  .describe("One checkbox to agree with `text`: the answer is `true`; a required consent cannot be completed without it.");

const textBlock = <T extends "HEADING" | "PARAGRAPH">(type: T) =>
  z.strictObject({
    id: idSchema.optional(),
    type: z.literal(type),
    text: z.string().max(limits.text).describe("The text; may recall an earlier question's answer or a hidden field as `{{key}}`."),
  });

const pageBreakBlock = z.strictObject({ id: idSchema.optional(), type: z.literal("PAGE_BREAK") });

export const blockSchema = z
  .discriminatedUnion("type", [
    simpleInputBlock("SHORT_TEXT"),
    simpleInputBlock("LONG_TEXT"),
    simpleInputBlock("EMAIL"),
    numberBlock,
    simpleInputBlock("PHONE"),
    simpleInputBlock("URL"),
    simpleInputBlock("DATE"),
    simpleInputBlock("TIME").describe("A time of day: the answer is `HH:MM`, 24 hours."),
    choiceBlock("MULTIPLE_CHOICE"),
    choiceBlock("CHECKBOXES"),
    choiceBlock("DROPDOWN"),
    multiSelectBlock,
    matrixBlock,
    choiceBlock("RANKING").describe("Options to put in order: the answer is every option's id once, first place first."),
    ratingBlock,
    linearScaleBlock,
    npsBlock,
    simpleInputBlock("FILE"),
    simpleInputBlock("SIGNATURE"),
    consentBlock,
    textBlock("HEADING"),
    textBlock("PARAGRAPH"),
    pageBreakBlock,
  ])
  .describe("A block of the form: a question (input types) or layout (HEADING, PARAGRAPH, PAGE_BREAK).");

export const hiddenFieldSchema = z.strictObject({
  name: z
    .string()
    .regex(fieldNamePattern, "must start with a letter or '_' and have at most 64 letters, digits or '_'")
    .describe("Name of the URL query parameter the value is read from."),
});

export const calculatedFieldSchema = z.strictObject({
  name: z
    .string()
    .regex(fieldNamePattern, "must start with a letter or '_' and have at most 64 letters, digits or '_'"),
  type: z.enum(["NUMBER", "TEXT"]),
  expression: z
    .string()
    .max(limits.expression)
    .describe(
      `A CEL expression (https://cel.dev) over the answers. It must parse and stay within: ` +
        `${expressionLimits.nodes} nodes, ${expressionLimits.depth} levels, ${expressionLimits.comprehensions} ` +
        `comprehensions (all, exists, exists_one, map, filter), ${expressionLimits.nestedComprehensions} of them ` +
        `inside one another, and ${expressionLimits.totalChars} characters for all of a document's expressions.`,
    ),
});

const blockRef = z.string().regex(idPattern, "must be a block id");

const logicConditionSchema = z
  .strictObject({
    question: blockRef.describe("The `id` of the question asked about."),
    operator: z
      .enum(logicOperators)
      .describe(
        "How its answer is compared. Text: EQUALS, NOT_EQUALS, CONTAINS (without regard to case or surrounding spaces); " +
          "NUMBER, RATING, LINEAR_SCALE and NPS: EQUALS, NOT_EQUALS, GREATER_THAN, LESS_THAN; DATE and TIME also GREATER_THAN (later), " +
          "LESS_THAN (earlier); " +
          "MULTIPLE_CHOICE and DROPDOWN: EQUALS, NOT_EQUALS an option id, ANY_OF a list of option ids; CHECKBOXES: CONTAINS an " +
          "option id, ANY_OF a list; every type: IS_ANSWERED, IS_NOT_ANSWERED (no value; all CONSENT offers). NOT_EQUALS also holds when unanswered.",
      ),
    value: z
      .union([z.string().max(limits.optionText), z.number(), z.array(z.string().regex(idPattern)).max(limits.options)])
      .optional()
      .describe("What the answer is compared with; absent for IS_ANSWERED and IS_NOT_ANSWERED."),
  })
  .describe("One condition of a rule.");

const logicActionSchema = z
  .discriminatedUnion("action", [
    z.strictObject({ action: z.literal("SHOW"), block: blockRef.describe("The `id` of the block shown.") }),
    z.strictObject({ action: z.literal("HIDE"), block: blockRef.describe("The `id` of the block hidden.") }),
    z.strictObject({ action: z.literal("REQUIRE"), block: blockRef.describe("The `id` of the question that needs an answer.") }),
    z.strictObject({
      action: z.literal("JUMP"),
      page: z.number().int().min(1).max(limits.blocks + 1).describe("The page moved on to when leaving the page of the rule's conditions, from 1."),
    }),
    z.strictObject({
      action: z.literal("SET"),
      field: z.string().regex(fieldNamePattern, "must be a calculated field's name").describe("The `name` of the calculated field set."),
      value: z
        .union([z.string().max(limits.optionText), z.number()])
        .describe("Its value: a number for a NUMBER field, a text for a TEXT field."),
    }),
  ])
  .describe(
    "SHOW a block (hidden until one of its SHOW rules holds), HIDE a block (a HIDE rule that holds wins), REQUIRE an answer " +
      "to a question, JUMP to a later page (passing over the pages between), or SET a calculated field to a value in place of " +
      "its expression's (the last SET rule that holds, in order, wins; the response and the webhook payload carry it).",
  );

const logicRuleSchema = z
  .strictObject({
    when: z.strictObject({
      match: z.enum(["all", "any"]).optional().describe("Whether all conditions must hold (default) or any one."),
      conditions: z.array(logicConditionSchema).min(1, "needs at least one condition").max(logicLimits.conditions),
    }),
    then: z.array(logicActionSchema).min(1, "needs at least one action").max(logicLimits.actions),
  })
  .meta({
    id: "LogicRule",
    description:
      "When <conditions> then <actions>. Rules act forwards only: every block a rule shows, hides or requires comes after " +
      "the questions its conditions ask about, and a jump goes to a later page than theirs; so no rule depends on itself. " +
      "A question hidden by logic (or on a page a jump passes over) needs no answer and takes none: the response stores it " +
      "as skipped (null), and so does the webhook payload.",
    examples: [
      {
        when: { match: "all", conditions: [{ question: "b_plan", operator: "EQUALS", value: "o_pro" }] },
        then: [{ action: "SHOW", block: "b_company" }, { action: "REQUIRE", block: "b_company" }],
      },
    ],
  });

type Json = string | number | boolean | null | Json[] | { [key: string]: Json };

/** The example document of DESIGN.md, as JSON: shown in the OpenAPI description, and used by tests. */
export const formDocumentExample: { [key: string]: Json } = {
  title: "Event sign-up",
  blocks: [
    { type: "HEADING", text: "Welcome" },
    { id: "b1", key: "q_name", type: "SHORT_TEXT", question: "Your full name", required: true },
    { type: "EMAIL", question: "Email address", fieldName: "email" },
    { type: "MULTIPLE_CHOICE", question: "Plan", options: [{ id: "o1", text: "Free" }, { text: "Pro" }] },
    { type: "PAGE_BREAK" },
    { type: "FILE", question: "Upload your CV" },
  ],
  hiddenFields: [{ name: "utm_source" }],
};

export const formDocumentSchema = z
  .strictObject({
    title: z.string().max(limits.title).optional(),
    blocks: z.array(blockSchema).max(limits.blocks),
    hiddenFields: z.array(hiddenFieldSchema).max(limits.hiddenFields).optional(),
    calculatedFields: z.array(calculatedFieldSchema).max(limits.calculatedFields).optional(),
    logic: z
      .array(logicRuleSchema)
      .max(logicLimits.rules)
      .optional()
      .describe(
        "Conditional logic: rules evaluated in order, the same way on the hosted page (with and without JavaScript) and " +
          "when a response is saved. Blocks are named by `id`, so give the blocks a rule names their ids. Checked when " +
          "saved: unknown blocks, conditions that do not fit their question's type, and rules acting backwards are a 400 " +
          "naming the rule (`document.logic[2].then[0]: jump target page 7 does not exist (the form has 3 pages)`).",
      ),
  })
  .superRefine((doc, ctx) => {
    // Hidden and calculated fields share one namespace of names.
    const seen = new Set<string>();
    const check = (list: "hiddenFields" | "calculatedFields") =>
      (doc[list] ?? []).forEach((field, i) => {
        if (seen.has(field.name)) {
          ctx.addIssue({ code: "custom", path: [list, i, "name"], message: `duplicate name "${field.name}"` });
        }
        seen.add(field.name);
      });
    check("hiddenFields");
    check("calculatedFields");
    for (const { index, message } of calculatedFieldProblems(doc.calculatedFields ?? [])) {
      ctx.addIssue({ code: "custom", path: ["calculatedFields", index, "expression"], message });
    }
  })
  .meta({
    id: "FormDocument",
    description:
      "The form document, version 1: the form's content, replaced as a unit. The server gives every block " +
      "and option without one an `id`, and every question a `key` that never changes afterwards.\n\n" +
      "Recall: a question, a description, a heading or a paragraph may show an earlier question's answer or a hidden " +
      "field's value as `{{key}}` (a question's key, a field's name), or `{{key|fallback}}` for when it is not answered " +
      "(else it shows as nothing); the thank-you screen (`settings.thankYou.title`, `.text`) may also recall any question " +
      "and calculated fields. A choice shows its option's text, a list its texts joined with \", \"; what is recalled is " +
      "text, never markup. A recall naming nothing it may (an unknown name, a question not before the text, a calculated " +
      "field outside the thank-you screen) is a 400 naming it: `document.blocks[3].question: {{plna}}: no question key, " +
      "hidden field or calculated field is named \"plna\"`.",
    examples: [formDocumentExample],
  });

export type FormDocument = z.infer<typeof formDocumentSchema>;
export type Block = FormDocument["blocks"][number];
export type InputBlock = Extract<Block, { type: InputBlockType }>;
export type LayoutBlock = Extract<Block, { type: LayoutBlockType }>;
export type ChoiceBlock = Extract<Block, { type: ChoiceBlockType }>;
export type BlockOption = z.infer<typeof optionSchema>;
export type HiddenField = z.infer<typeof hiddenFieldSchema>;
export type CalculatedField = z.infer<typeof calculatedFieldSchema>;

/** An empty document: what a form created without one starts with. */
export function emptyDocument(): FormDocument {
  return { blocks: [] };
}
