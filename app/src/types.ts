// The JSON shapes of /app/api, as the gateway's schemas state them (@formsvc/api-records/schemas): the
// app's own records under the names the app uses. Types only; nothing here is restated.
export type { Block, BlockType, CalculatedField, FormDocument, FormSettings, HiddenField, InputBlock } from "@formsvc/form-document";
export type {
  AppAnswer as Answer,
  ApiKey,
  AppForm as Form,
  AppPage as Page,
  AppSubmission as Submission,
  AppWorkspace as Workspace,
  Attempt,
  CalculatedFieldProblem,
  Delivery,
  FieldProblem,
  FormHoldings,
  FormStatus,
  FormStorage,
  Invitation,
  Items,
  Member,
  PendingInvitation,
  Question,
  QuestionSummary,
  ResponseSummary,
  Role,
  SessionUser,
  User,
  Webhook,
} from "@formsvc/api-records/schemas";
