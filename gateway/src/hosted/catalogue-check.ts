// The check of the hosted pages' message catalogues (run in `npm test` by catalogue-check.test.ts): every
// catalogue has every message English has and no other, each parses as ICU MessageFormat, names the same
// arguments as English's, uses only plural categories its language has (CLDR, through Intl), and the
// messages the page's script fills in itself take plain arguments only.
import { IntlMessageFormat } from "intl-messageformat";
import { argumentNames, scriptMessageKeys, sourceLanguage, type Catalogue } from "./page-messages.ts";

type Elements = ReturnType<IntlMessageFormat["getAst"]>;

/** Element types of intl-messageformat's AST that the page's script can fill in: literal text and a plain {argument}. */
const literalElement = 0;
const argumentElement = 1;
const pluralElement = 6;

function walk(elements: Elements, visit: (element: Elements[number]) => void): void {
  for (const element of elements) {
    visit(element);
    if ("options" in element) for (const option of Object.values(element.options)) walk(option.value, visit);
    if ("children" in element) walk(element.children, visit);
  }
}

/**
 * Each problem of the catalogues as a line naming the language and the key; none when they are complete and
 * sound. `plainKeys`: the messages held to plain {arguments} (the hosted page's script's; the app has none).
 */
export function catalogueProblems(catalogues: ReadonlyMap<string, Catalogue>, plainKeys: readonly string[] = scriptMessageKeys): string[] {
  const source = catalogues.get(sourceLanguage);
  if (!source) return [`no ${sourceLanguage} catalogue: it is the source every other is checked against`];
  const problems: string[] = [];
  const scriptKeys = new Set<string>(plainKeys);
  for (const [language, catalogue] of catalogues) {
    try {
      Intl.getCanonicalLocales(language);
    } catch {
      problems.push(`${language}: the file name is no BCP 47 language tag`);
      continue;
    }
    const categories = new Set<string>(new Intl.PluralRules(language).resolvedOptions().pluralCategories);
    for (const key of Object.keys(source)) if (!(key in catalogue)) problems.push(`${language}: missing "${key}"`);
    for (const [key, message] of Object.entries(catalogue)) {
      if (!(key in source)) {
        problems.push(`${language}: "${key}" is not a message of ${sourceLanguage}`);
        continue;
      }
      if (typeof message !== "string") {
        problems.push(`${language}: "${key}" is not a string`);
        continue;
      }
      let ast: Elements;
      try {
        ast = new IntlMessageFormat(message, language, undefined, { ignoreTag: true }).getAst();
      } catch (err) {
        problems.push(`${language}: "${key}" is no ICU message: ${(err as Error).message}`);
        continue;
      }
      const expected = argumentNames(source[key]).sort().join(", ");
      const named = argumentNames(message).sort().join(", ");
      if (named !== expected) problems.push(`${language}: "${key}" names arguments {${named}}, ${sourceLanguage} names {${expected}}`);
      let scriptCannotFill = false;
      walk(ast, (element) => {
        if (element.type === pluralElement && "options" in element) {
          for (const category of Object.keys(element.options)) {
            if (!category.startsWith("=") && !categories.has(category)) problems.push(`${language}: "${key}" has plural category "${category}", which ${language} does not use`);
          }
        }
        if (element.type !== literalElement && element.type !== argumentElement) scriptCannotFill = true;
      });
      if (scriptKeys.has(key) && scriptCannotFill) problems.push(`${language}: "${key}" is shown by the page's script, which fills in plain {arguments} only`);
    }
  }
  return problems;
}
