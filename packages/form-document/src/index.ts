export {
  answerText,
  choiceBlockTypes,
  inputBlockTypes,
  maxUploadBytes,
  questionTypes,
  scaleOf,
  takesOptions,
  takesPlaceholder,
  takesUploads,
  typesAnswering,
  type ChoiceBlockType,
  type InputBlockType,
} from "./question-types.ts";
export {
  blockSchema,
  blockTypes,
  calculatedFieldSchema,
  defaultRatingMax,
  emptyDocument,
  expressionLimits,
  fieldNamePattern,
  formDocumentExample,
  formDocumentSchema,
  hiddenFieldSchema,
  idPattern,
  isChoiceBlock,
  isInputBlock,
  keyPattern,
  layoutBlockTypes,
  limits,
  optionSchema,
  type Block,
  type BlockOption,
  type BlockType,
  type CalculatedField,
  type ChoiceBlock,
  type FormDocument,
  type HiddenField,
  type InputBlock,
  type LayoutBlock,
  type LayoutBlockType,
} from "./schema.ts";
export {
  conditionHolds,
  documentPages,
  evaluateLogic,
  hasLogic,
  nextPageOf,
  operatorsFor,
  pageShows,
  previousPageOf,
  valuelessOperators,
  type LogicAction,
  type LogicCondition,
  type LogicOperator,
  type LogicRule,
  type LogicState,
} from "./logic.ts";
export { logicProblems, type LogicProblem } from "./logic-check.ts";
export { fillRecall, hasRecall, recallingBlockTexts, recallingThankYouTexts, recallsIn, recallValues, recallsOf, type Recall, type RecallBlock } from "./recall.ts";
export { recallProblems, type RecallProblem } from "./recall-check.ts";
export { calculatedFieldProblems, expressionCost, expressionProblem, type ExpressionCost } from "./expression-cost.ts";
export { DocumentError, describeZodError, fieldViolationParams, fieldViolationsOf, formatPath } from "./errors.ts";
export { cursorPattern, isRecordId, jsonInputProblem, maxAnswerDepth, maxBodyDepth, maxInt32, recordIdPattern, textProblem } from "./input-safety.ts";
export { normalizeDocument, type NormalizedDocument } from "./normalize.ts";
export {
  calculatedFieldKey,
  hiddenFieldKey,
  listQuestions,
  respondentCountryQuestion,
  type Question,
} from "./questions.ts";
export {
  applySettingsPatch,
  defaultSettings,
  languageTagPattern,
  formSettingsPatchSchema,
  formSettingsSchema,
  resolveSettings,
  isPastClosingDate,
  maxRetentionDays,
  receiptQuestionOf,
  sendsNotifications,
  settingsSecrets,
  type FormSettings,
  type NotificationSettings,
  type FormSettingsPatch,
  defaultThankYou,
  type ThankYouScreen,
} from "./settings.ts";
export {
  buttonRadii,
  colorSchemes,
  contrastRatio,
  defaultTheme,
  fontStacks,
  formatRatio,
  hexColorPattern,
  minContrast,
  schemePalettes,
  textOnBackground,
  themeContrast,
  themeText,
  type ButtonStyle,
  type ColorScheme,
  type FontChoice,
  type FormTheme,
} from "./theme.ts";
export {
  createFormBodySchema,
  formNameSchema,
  updateFormBodySchema,
  type CreateFormBody,
  type UpdateFormBody,
} from "./bodies.ts";
export { randomId, randomKey } from "./ids.ts";
export {
  answerPath,
  answerProblem,
  describeProblems,
  validateAnswers,
  validateHidden,
  type AnswerProblem,
  type CheckedAnswer,
} from "./answers.ts";
export { sampleAnswer } from "./sample-answers.ts";
export { describeMissingTranslations, formLanguages, missingTranslations, ownerTexts, translateForm, type OwnerText } from "./translations.ts";
