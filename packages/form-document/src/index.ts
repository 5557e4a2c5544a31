export {
  blockSchema,
  blockTypes,
  calculatedFieldSchema,
  choiceBlockTypes,
  defaultRatingMax,
  emptyDocument,
  fieldNamePattern,
  formDocumentExample,
  formDocumentSchema,
  hiddenFieldSchema,
  idPattern,
  inputBlockTypes,
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
  type ChoiceBlockType,
  type FormDocument,
  type HiddenField,
  type InputBlock,
  type InputBlockType,
  type LayoutBlock,
  type LayoutBlockType,
} from "./schema.ts";
export { DocumentError, describeZodError, formatPath } from "./errors.ts";
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
  formSettingsPatchSchema,
  formSettingsSchema,
  resolveSettings,
  type FormSettings,
  type FormSettingsPatch,
} from "./settings.ts";
export {
  createFormBodySchema,
  formNameSchema,
  updateFormBodySchema,
  type CreateFormBody,
  type UpdateFormBody,
} from "./bodies.ts";
export { randomId, randomKey } from "./ids.ts";
