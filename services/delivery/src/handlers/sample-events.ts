// ListSampleEvents: what a webhook of a form would be sent, for automation tools to map fields before
// (or without) subscribing: the latest real events of the form (response events as submissions builds
// them), else one made from the form as it is now with `"test": true`, as a test event is.
import { Code, ConnectError, type Client } from "@connectrpc/connect";
import { asCaller } from "@formsvc/platform/caller.ts";
import { defaultSampleEvents, eventCaseOf, formResponseEventType, maxSampleEvents } from "@formsvc/platform/events.ts";
import type { FileLinks } from "@formsvc/platform/file-links.ts";
import { newId } from "@formsvc/platform/ids.ts";
import type { Logger } from "@formsvc/platform/logger.ts";
import { upstreamFailure } from "@formsvc/platform/upstream-failure.ts";
import type { ListSampleEventsRequest } from "@formsvc/proto/delivery/v1/delivery_pb.js";
import { FormStatus, type Form, type FormsService } from "@formsvc/proto/forms/v1/forms_pb.js";
import type { SubmissionsService } from "@formsvc/proto/submissions/v1/submissions_pb.js";
import { serializePayload, testPayload } from "../sender/payload.ts";
import { sampleEvent, type SampleForm } from "../sender/sample-event.ts";

export interface SampleEventsDeps {
  forms: Pick<Client<typeof FormsService>, "getForm">;
  /** ListResponseEvents as the caller: the latest responses' events. */
  submissions: Pick<Client<typeof SubmissionsService>, "listResponseEvents">;
  fileLinks: FileLinks;
  logger?: Logger;
}

/** A form as a test or sample event is built from it. */
export function sampleFormOf(form: Form): SampleForm {
  return {
    id: form.id,
    workspaceId: form.workspaceId,
    name: form.name,
    status: FormStatus[form.status].toLowerCase(),
    version: form.version,
    document: form.document ?? {},
  };
}

/** The webhook bodies (JSON) of ListSampleEvents, newest first. */
export async function sampleEventBodies(deps: SampleEventsDeps, req: ListSampleEventsRequest, caller: string): Promise<string[]> {
  const eventType = req.eventType || formResponseEventType;
  const kind = eventCaseOf(eventType);
  if (!kind) throw new ConnectError(`eventType: ${eventType.slice(0, 60)} is not an event type`, Code.InvalidArgument);
  const limit = req.limit || defaultSampleEvents;
  if (limit < 1 || limit > maxSampleEvents) throw new ConnectError(`limit: 1 to ${maxSampleEvents}`, Code.InvalidArgument);
  if (!req.formId) throw new ConnectError("form not found", Code.NotFound);
  const failed = (service: string) => (err: unknown) => upstreamFailure(service, err, { logger: deps.logger });
  // Form events are not kept once delivered: only response events have real samples.
  if (kind === "formResponse" || kind === "formResponsePartial") {
    const { events } = await deps.submissions.listResponseEvents({ formId: req.formId, eventType, limit }, asCaller(caller)).catch(failed("submissions"));
    if (events.length > 0) return events.map((event) => serializePayload(event, deps.fileLinks));
  }
  const { form } = await deps.forms.getForm({ id: req.formId }, asCaller(caller)).catch(failed("forms"));
  const event = sampleEvent(eventType, { eventId: `test_${newId()}`, responseId: `test_${newId()}`, form: sampleFormOf(form!), at: new Date() });
  return [JSON.stringify(testPayload(event, deps.fileLinks))];
}
