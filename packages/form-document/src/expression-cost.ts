// The save-time check of calculated fields' CEL expressions: they must parse, and stay within
// `expressionLimits` (size, depth, comprehensions). Without zod, so the browser app runs the same check
// before saving (through "@formsvc/form-document/expression-cost"). Evaluation has its own wall-clock
// limit in submissions; this check keeps the cost of one evaluation from growing exponentially.
import { parse } from "@bufbuild/cel";
import { expressionLimits } from "./block-types.ts";

type Expr = ReturnType<typeof parse>["expr"];

/** The measures of a parsed expression that `expressionLimits` bounds. */
export interface ExpressionCost {
  /** Nodes of the tree, macros expanded. */
  nodes: number;
  /** Levels of the tree (a lone constant is 1). */
  depth: number;
  comprehensions: number;
  /** The most comprehensions run inside one another, each once per element of the one around it. */
  nestedComprehensions: number;
}

export function expressionCost(expr: Expr): ExpressionCost {
  const cost: ExpressionCost = { nodes: 0, depth: 0, comprehensions: 0, nestedComprehensions: 0 };
  const visit = (e: Expr | undefined, depth: number, nesting: number): void => {
    if (!e) return;
    cost.nodes++;
    cost.depth = Math.max(cost.depth, depth);
    const next = depth + 1;
    const kind = e.exprKind;
    switch (kind.case) {
      case "selectExpr":
        visit(kind.value.operand, next, nesting);
        break;
      case "callExpr":
        visit(kind.value.target, next, nesting);
        for (const arg of kind.value.args) visit(arg, next, nesting);
        break;
      case "listExpr":
        for (const element of kind.value.elements) visit(element, next, nesting);
        break;
      case "structExpr":
        for (const entry of kind.value.entries) {
          if (entry.keyKind.case === "mapKey") visit(entry.keyKind.value, next, nesting);
          visit(entry.value, next, nesting);
        }
        break;
      case "comprehensionExpr": {
        const c = kind.value;
        const inner = nesting + 1;
        cost.comprehensions++;
        cost.nestedComprehensions = Math.max(cost.nestedComprehensions, inner);
        // The range, the start and the result are evaluated once; the condition and step once per element.
        visit(c.iterRange, next, nesting);
        visit(c.accuInit, next, nesting);
        visit(c.result, next, nesting);
        visit(c.loopCondition, next, inner);
        visit(c.loopStep, next, inner);
        break;
      }
    }
  };
  visit(expr, 1, 0);
  return cost;
}

/** The parser's position and message ("1:5: found * but expecting end of input"), else its message. */
function describeParseError(err: unknown): string {
  if (err instanceof RangeError) return `nests too deeply to parse (at most ${expressionLimits.depth} levels)`;
  const { rawMessage, location } = err as { rawMessage?: unknown; location?: { start?: { line: number; column: number } } };
  if (typeof rawMessage === "string" && location?.start) return `does not parse: ${location.start.line}:${location.start.column}: ${rawMessage}`;
  return `does not parse: ${err instanceof Error ? err.message : String(err)}`;
}

/** What is wrong with one expression against `expressionLimits`, or undefined when it may be saved. */
export function expressionProblem(expression: string): string | undefined {
  if (expression.length > expressionLimits.chars) {
    return `is ${expression.length} characters long; at most ${expressionLimits.chars}`;
  }
  if (!/\S/.test(expression)) return "is empty";
  let expr: Expr;
  try {
    expr = parse(expression).expr;
  } catch (err) {
    return describeParseError(err);
  }
  const cost = expressionCost(expr);
  if (cost.nodes > expressionLimits.nodes) return `has ${cost.nodes} parts (nodes of its parsed tree); at most ${expressionLimits.nodes}`;
  if (cost.depth > expressionLimits.depth) return `nests ${cost.depth} levels deep; at most ${expressionLimits.depth}`;
  if (cost.comprehensions > expressionLimits.comprehensions) {
    return `has ${cost.comprehensions} comprehensions (all, exists, exists_one, map, filter); at most ${expressionLimits.comprehensions}`;
  }
  if (cost.nestedComprehensions > expressionLimits.nestedComprehensions) {
    return `runs ${cost.nestedComprehensions} comprehensions inside one another; at most ${expressionLimits.nestedComprehensions}`;
  }
  return undefined;
}

/**
 * The problems of a document's calculated fields, by index: each expression's, and the document's
 * total length, reported on the field that goes over it (later ones are not parsed).
 */
export function calculatedFieldProblems(fields: readonly { expression: string }[]): { index: number; message: string }[] {
  const problems: { index: number; message: string }[] = [];
  let total = 0;
  for (const [index, field] of fields.entries()) {
    total += field.expression.length;
    if (total > expressionLimits.totalChars) {
      problems.push({ index, message: `takes the document's expressions over ${expressionLimits.totalChars} characters together` });
      break;
    }
    const message = expressionProblem(field.expression);
    if (message) problems.push({ index, message });
  }
  return problems;
}
