// The checks of the app's texts, run in `npm test` by check.test.ts: the catalogues are complete and sound
// (the hosted pages' check, catalogueProblems), and no .tsx file shows a text of its own instead of one of
// the catalogue's. A text is found where it is shown: JSX text, a string in a JSX child or in an attribute or
// property that is read out or shown (title, label, placeholder, aria-label, …), and the text given to a
// notice or an error message. Strings without a letter (punctuation, "—", "×") are no text, nor is code
// (<code>, <kbd>, <samp>, <pre>).
import { readdirSync, readFileSync } from "node:fs";
import { basename, join, relative } from "node:path";
import ts from "typescript";
import { catalogueProblems } from "../../../gateway/src/hosted/catalogue-check.ts";

export const appSourceDir = join(import.meta.dirname, "..");
export const messagesDir = join(import.meta.dirname, "messages");

/** Every catalogue of `dir` by its language tag (its file name without .json). */
export function readAppCatalogues(dir: string = messagesDir): Map<string, Record<string, string>> {
  const catalogues = new Map<string, Record<string, string>>();
  for (const file of readdirSync(dir).filter((name) => name.endsWith(".json")).sort()) {
    catalogues.set(basename(file, ".json"), JSON.parse(readFileSync(join(dir, file), "utf8")) as Record<string, string>);
  }
  return catalogues;
}

/** Each problem of the app's catalogues: a missing or extra key, a message that does not parse, other arguments. */
export function appCatalogueProblems(catalogues: ReadonlyMap<string, Record<string, string>> = readAppCatalogues()): string[] {
  // No message of the app is filled in by a page script, so none is held to plain arguments.
  return catalogueProblems(catalogues, []);
}

/** JSX attributes and object properties whose string is shown or read out. */
const shownNames = new Set([
  "title",
  "label",
  "what",
  "aria-label",
  "aria-description",
  "aria-roledescription",
  "placeholder",
  "alt",
  "message",
  "submitLabel",
  "confirmLabel",
  "noun",
  "heading",
  "description",
  "hint",
  "legend",
  "caption",
]);
/** Functions whose first argument is shown: a notice, and the setters of an error or a message shown on the page. */
const isShownCall = (name: string) => name === "notify" || /^set\w*(Error|Problem|Message)$/.test(name);

/** Elements whose content is code, the same in every language. */
const codeElements = new Set(["code", "kbd", "samp", "pre"]);

const hasLetter = (text: string) => /\p{L}/u.test(text);

export interface VisibleLiteral {
  line: number;
  text: string;
}

/** The texts of a .tsx file's source that are shown as they are written, not taken from the catalogue. */
export function visibleLiterals(source: string, fileName = "file.tsx"): VisibleLiteral[] {
  const file = ts.createSourceFile(fileName, source, ts.ScriptTarget.Latest, true, ts.ScriptKind.TSX);
  const found: VisibleLiteral[] = [];
  const report = (node: ts.Node, text: string) => {
    if (hasLetter(text)) found.push({ line: file.getLineAndCharacterOfPosition(node.getStart(file)).line + 1, text: text.trim() });
  };
  /** The strings an expression shows as it stands: itself, either branch of a condition, either side of ?? / || / &&. */
  const shownStrings = (node: ts.Expression | undefined): void => {
    if (!node) return;
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) report(node, node.text);
    else if (ts.isTemplateExpression(node)) report(node, [node.head.text, ...node.templateSpans.map((span) => span.literal.text)].join(" "));
    else if (ts.isParenthesizedExpression(node)) shownStrings(node.expression);
    else if (ts.isConditionalExpression(node)) {
      shownStrings(node.whenTrue);
      shownStrings(node.whenFalse);
    } else if (ts.isBinaryExpression(node) && [ts.SyntaxKind.QuestionQuestionToken, ts.SyntaxKind.BarBarToken, ts.SyntaxKind.AmpersandAmpersandToken].includes(node.operatorToken.kind)) {
      shownStrings(node.left);
      shownStrings(node.right);
    }
  };
  const propertyName = (name: ts.PropertyName | ts.JsxAttributeName) => (ts.isIdentifier(name) || ts.isStringLiteral(name) ? name.text : ts.isJsxNamespacedName(name) ? "" : name.getText(file));
  const visit = (node: ts.Node): void => {
    // Code is written as it is in every language.
    if (ts.isJsxElement(node) && codeElements.has(node.openingElement.tagName.getText(file))) return;
    // A character reference (&lt;) is a character, not a word.
    if (ts.isJsxText(node)) report(node, node.text.replace(/&\w+;/g, " "));
    else if (ts.isJsxExpression(node) && (ts.isJsxElement(node.parent) || ts.isJsxFragment(node.parent))) shownStrings(node.expression);
    else if (ts.isJsxAttribute(node) && shownNames.has(propertyName(node.name)) && node.initializer) {
      if (ts.isStringLiteral(node.initializer)) report(node.initializer, node.initializer.text);
      else if (ts.isJsxExpression(node.initializer)) shownStrings(node.initializer.expression);
    } else if (ts.isPropertyAssignment(node) && shownNames.has(propertyName(node.name))) shownStrings(node.initializer);
    else if (ts.isCallExpression(node) && ts.isIdentifier(node.expression) && isShownCall(node.expression.text)) shownStrings(node.arguments[0]);
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

/** Every .tsx file under the app's source (unit tests aside), by its path relative to it. */
export function appComponentFiles(dir: string = appSourceDir): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile() && entry.name.endsWith(".tsx") && !entry.name.endsWith(".spec.tsx")) files.push(relative(dir, join(entry.parentPath, entry.name)));
  }
  return files.sort();
}

/** Each text of the app's .tsx files not taken from the catalogue, as "path:line: text". */
export function literalProblems(dir: string = appSourceDir): string[] {
  return appComponentFiles(dir).flatMap((path) => visibleLiterals(readFileSync(join(dir, path), "utf8"), path).map(({ line, text }) => `${path}:${line}: ${JSON.stringify(text)}`));
}
