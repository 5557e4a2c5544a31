// The editor's Logic panel: the form's conditional logic rules, "when <question> <operator> <value>
// [and/or ...] then show / hide / require <block>, jump to <page>, or set <calculated field> to <value>". Questions and blocks are picked by
// their text and kept by id; the operators each question offers and the rules' check are the form
// document's own (logic.ts, logic-check.ts), so what this panel allows is what the server accepts.
import { useId } from "react";
import { documentPages, operatorsFor, valuelessOperators, type LogicAction, type LogicCondition, type LogicOperator, type LogicRule } from "@formsvc/form-document/logic";
import { logicProblems } from "@formsvc/form-document/logic-check";
import { takesNumber } from "@formsvc/form-document/block-types";
import { blockSummary, isChoiceType, isInputType, removeItem, replaceItem, type Draft, type EditableBlock } from "../lib/document.ts";
import { t, type MessageKey } from "../i18n/messages.ts";

const operatorLabels: Record<LogicOperator, MessageKey> = {
  EQUALS: "logic.op.equals",
  NOT_EQUALS: "logic.op.notEquals",
  CONTAINS: "logic.op.contains",
  IS_ANSWERED: "logic.op.answered",
  IS_NOT_ANSWERED: "logic.op.notAnswered",
  GREATER_THAN: "logic.op.greater",
  LESS_THAN: "logic.op.less",
  ANY_OF: "logic.op.anyOf",
};

const actionLabels: Record<LogicAction["action"], MessageKey> = {
  SHOW: "logic.action.show",
  HIDE: "logic.action.hide",
  REQUIRE: "logic.action.require",
  JUMP: "logic.action.jump",
  SET: "logic.action.set",
};

/** The value a condition starts with for `operator` on `block`: its first option, 1, or empty text. */
function defaultValue(block: EditableBlock | undefined, operator: LogicOperator): LogicCondition["value"] {
  if (!block || valuelessOperators.includes(operator)) return undefined;
  const first = block.options?.[0]?.id ?? "";
  if (operator === "ANY_OF") return first ? [first] : [];
  if (isChoiceType(block.type)) return first;
  if (takesNumber(block.type)) return 1;
  return "";
}

function condition(block: EditableBlock | undefined, operator?: LogicOperator): LogicCondition {
  const op = operator ?? operatorsFor(block?.type ?? "")[0] ?? "IS_ANSWERED";
  const value = defaultValue(block, op);
  return { question: block?.id ?? "", operator: op, ...(value === undefined ? {} : { value }) };
}

export function LogicEditor({ draft, onChange }: { draft: Draft; onChange(d: Draft): void }) {
  const id = useId();
  const rules = draft.logic ?? [];
  const questions = draft.blocks.filter((b) => isInputType(b.type) && b.id);
  const blocks = draft.blocks.filter((b) => b.type !== "PAGE_BREAK" && b.id);
  /** What a new action, or one changed to a kind that names a block, acts on at first. */
  const lastBlock = blocks.at(-1)?.id ?? "";
  const pages = documentPages({ blocks: draft.blocks });
  const calculated = draft.calculatedFields;
  const problems = logicProblems({ blocks: draft.blocks, calculatedFields: calculated, logic: rules });
  /** A SET of `name` (the first calculated field when none), with its type's empty value. */
  const setOf = (name?: string): LogicAction => {
    const field = calculated.find((f) => f.name === name) ?? calculated[0];
    return { action: "SET", field: field?.name ?? "", value: field?.type === "NUMBER" ? 0 : "" };
  };
  const setRules = (logic: LogicRule[]) => onChange({ ...draft, logic });
  const setRule = (i: number, rule: LogicRule) => setRules(replaceItem(rules, i, rule));

  const addRule = () => {
    const question = questions[0];
    const after = draft.blocks.slice(draft.blocks.indexOf(question!) + 1).find((b) => b.type !== "PAGE_BREAK" && b.id);
    setRules([...rules, { when: { match: "all", conditions: [condition(question)] }, then: [{ action: "SHOW", block: after?.id ?? "" }] }]);
    requestAnimationFrame(() => document.getElementById(`${id}-${rules.length}-c0-question`)?.focus());
  };

  return (
    <fieldset className="logic-editor folded-body">
      <legend className="sr-only">{t("logic.title")}</legend>
      <p className="hint">{t("logic.hint")}</p>
      {rules.length === 0 && <p className="muted">{t("logic.noRules")}</p>}
      <ol className="plain-list logic-rules">
        {rules.map((rule, i) => {
          const where = `${id}-${i}`;
          const ruleProblems = problems.filter((p) => p.path === `logic[${i}]` || p.path.startsWith(`logic[${i}].`));
          const setConditions = (conditions: LogicCondition[]) => setRule(i, { ...rule, when: { ...rule.when, conditions } });
          const setActions = (then: LogicAction[]) => setRule(i, { ...rule, then });
          return (
            <li key={i} className="logic-rule" data-rule-index={i} aria-label={t("logic.rule", { rule: i + 1 })}>
              <h3 className="logic-rule-title">{t("logic.rule", { rule: i + 1 })}</h3>
              {rule.when.conditions.map((c, j) => {
                const block = draft.blocks.find((b) => b.id === c.question);
                const operators = operatorsFor(block?.type ?? "");
                const setCondition = (next: LogicCondition) => setConditions(replaceItem(rule.when.conditions, j, next));
                const cid = `${where}-c${j}`;
                return (
                  <div key={j} className="option-row logic-row">
                    {j === 0 ? (
                      <span className="logic-word">{t("logic.when")}</span>
                    ) : (
                      <select aria-label={t("logic.match", { rule: i + 1 })} value={rule.when.match ?? "all"} onChange={(e) => setRule(i, { ...rule, when: { ...rule.when, match: e.target.value as "all" | "any" } })}>
                        <option value="all">{t("logic.and")}</option>
                        <option value="any">{t("logic.or")}</option>
                      </select>
                    )}
                    <label className="sr-only" htmlFor={`${cid}-question`}>{t("logic.conditionQuestion", { rule: i + 1, condition: j + 1 })}</label>
                    <select id={`${cid}-question`} value={c.question} onChange={(e) => setCondition(condition(draft.blocks.find((b) => b.id === e.target.value)))}>
                      {!block && <option value={c.question}>({t("logic.removedQuestion")})</option>}
                      {questions.map((q) => (
                        <option key={q.id} value={q.id}>
                          {blockSummary(q)}
                        </option>
                      ))}
                    </select>
                    <label className="sr-only" htmlFor={`${cid}-operator`}>{t("logic.conditionOperator", { rule: i + 1, condition: j + 1 })}</label>
                    <select id={`${cid}-operator`} value={c.operator} onChange={(e) => setCondition(condition(block, e.target.value as LogicOperator))}>
                      {operators.map((op) => (
                        <option key={op} value={op}>
                          {t(operatorLabels[op])}
                        </option>
                      ))}
                    </select>
                    <ConditionValue id={`${cid}-value`} label={t("logic.conditionValue", { rule: i + 1, condition: j + 1 })} block={block} condition={c} onChange={setCondition} />
                    {rule.when.conditions.length > 1 && (
                      <button type="button" onClick={() => setConditions(removeItem(rule.when.conditions, j))} aria-label={t("logic.removeCondition", { rule: i + 1, condition: j + 1 })}>
                        {t("editor.remove")}
                      </button>
                    )}
                  </div>
                );
              })}
              <button type="button" onClick={() => setConditions([...rule.when.conditions, condition(questions[0])])}>
                {t("logic.addCondition")}
              </button>
              {rule.then.map((action, k) => {
                const aid = `${where}-a${k}`;
                const setAction = (next: LogicAction) => setActions(replaceItem(rule.then, k, next));
                const targets = action.action === "REQUIRE" ? questions : blocks;
                return (
                  <div key={k} className="option-row logic-row">
                    <span className="logic-word">{k === 0 ? t("logic.then") : t("logic.and")}</span>
                    <label className="sr-only" htmlFor={`${aid}-action`}>{t("logic.actionLabel", { rule: i + 1, action: k + 1 })}</label>
                    <select
                      id={`${aid}-action`}
                      value={action.action}
                      onChange={(e) => {
                        const kind = e.target.value as LogicAction["action"];
                        if (kind === "JUMP") setAction({ action: "JUMP", page: Math.min(pages.length, 2) });
                        else if (kind === "SET") setAction(setOf());
                        else setAction({ action: kind, block: "block" in action ? action.block : lastBlock });
                      }}
                    >
                      {(Object.keys(actionLabels) as LogicAction["action"][])
                        // Setting is offered once the form has calculated fields (the Calculated fields card).
                        .filter((a) => a !== "SET" || calculated.length > 0 || action.action === "SET")
                        .map((a) => (
                          <option key={a} value={a}>
                            {t(actionLabels[a])}
                          </option>
                        ))}
                    </select>
                    <label className="sr-only" htmlFor={`${aid}-target`}>{t("logic.actionTarget", { rule: i + 1, action: k + 1 })}</label>
                    {action.action === "JUMP" ? (
                      <select id={`${aid}-target`} value={action.page} onChange={(e) => setAction({ action: "JUMP", page: Number(e.target.value) })}>
                        {pages.map((page, p) => (
                          <option key={p} value={p + 1}>
                            {page[0] ? t("logic.pageWith", { page: p + 1, first: blockSummary(page[0] as EditableBlock) }) : t("logic.page", { page: p + 1 })}
                          </option>
                        ))}
                      </select>
                    ) : action.action === "SET" ? (
                      <>
                        <select id={`${aid}-target`} value={action.field} onChange={(e) => setAction(setOf(e.target.value))}>
                          {!calculated.some((f) => f.name === action.field) && <option value={action.field}>({t("logic.chooseField")})</option>}
                          {calculated.map((f) => (
                            <option key={f.name} value={f.name}>
                              {f.name}
                            </option>
                          ))}
                        </select>
                        <span className="logic-word">{t("logic.to")}</span>
                        <label className="sr-only" htmlFor={`${aid}-value`}>{t("logic.actionValue", { rule: i + 1, action: k + 1 })}</label>
                        {typeof action.value === "number" ? (
                          <input
                            id={`${aid}-value`}
                            type="number"
                            step="any"
                            value={action.value}
                            onChange={(e) => setAction({ ...action, value: e.target.value === "" ? 0 : Number(e.target.value) })}
                          />
                        ) : (
                          <input id={`${aid}-value`} value={action.value} onChange={(e) => setAction({ ...action, value: e.target.value })} />
                        )}
                      </>
                    ) : (
                      <select id={`${aid}-target`} value={action.block} onChange={(e) => setAction({ action: action.action, block: e.target.value })}>
                        {!targets.some((b) => b.id === action.block) && <option value={action.block}>({t("logic.chooseBlock")})</option>}
                        {targets.map((b) => (
                          <option key={b.id} value={b.id}>
                            {blockSummary(b)}
                          </option>
                        ))}
                      </select>
                    )}
                    {rule.then.length > 1 && (
                      <button type="button" onClick={() => setActions(removeItem(rule.then, k))} aria-label={t("logic.removeAction", { rule: i + 1, action: k + 1 })}>
                        {t("editor.remove")}
                      </button>
                    )}
                  </div>
                );
              })}
              <div className="option-row logic-rule-actions">
                <button type="button" onClick={() => setActions([...rule.then, { action: "SHOW", block: lastBlock }])}>
                  {t("logic.addAction")}
                </button>
                <button type="button" onClick={() => setRules(removeItem(rules, i))} aria-label={t("logic.removeRuleNamed", { rule: i + 1 })}>
                  {t("logic.removeRule")}
                </button>
              </div>
              {ruleProblems.length > 0 && (
                <ul className="error-text logic-problems" role="alert">
                  {ruleProblems.map((p) => (
                    <li key={p.path + p.message}>{p.message}</li>
                  ))}
                </ul>
              )}
            </li>
          );
        })}
      </ol>
      <button type="button" onClick={addRule} disabled={questions.length === 0}>
        {t("logic.addRule")}
      </button>
    </fieldset>
  );
}

/** The value a condition compares with, as its question takes it: an option, options, a number, a date or text. */
function ConditionValue({ id, label, block, condition: c, onChange }: { id: string; label: string; block: EditableBlock | undefined; condition: LogicCondition; onChange(c: LogicCondition): void }) {
  if (!block || valuelessOperators.includes(c.operator)) return null;
  const set = (value: LogicCondition["value"]) => onChange({ ...c, value });
  const labelled = <label className="sr-only" htmlFor={id}>{label}</label>;
  if (block.options) {
    // ANY_OF picks several options (an array); the other operators one.
    const multiple = c.operator === "ANY_OF";
    const value = multiple ? (Array.isArray(c.value) ? c.value.map(String) : []) : String(c.value ?? "");
    return (
      <>
        {labelled}
        <select
          id={id}
          multiple={multiple}
          value={value}
          onChange={(e) => set(multiple ? Array.from(e.target.selectedOptions, (o) => o.value) : e.target.value)}
        >
          {block.options.map((o) => (
            <option key={o.id} value={o.id}>
              {o.text}
            </option>
          ))}
        </select>
      </>
    );
  }
  if (takesNumber(block.type)) {
    return (
      <>
        {labelled}
        <input id={id} type="number" step="any" value={typeof c.value === "number" ? c.value : ""} onChange={(e) => set(e.target.value === "" ? undefined : Number(e.target.value))} />
      </>
    );
  }
  return (
    <>
      {labelled}
      <input id={id} type={block.type === "DATE" ? "date" : "text"} value={typeof c.value === "string" ? c.value : ""} onChange={(e) => set(e.target.value)} />
    </>
  );
}
