package formsvc.example;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import formsvc.client.ApiClient;
import formsvc.client.ApiException;
import formsvc.client.api.FormsApi;
import formsvc.client.api.HostedFormsApi;
import formsvc.client.api.SubmissionsApi;
import formsvc.client.api.UsersApi;
import formsvc.client.api.WebhooksApi;
import formsvc.client.model.AnswerOneOf;
import formsvc.client.model.AnswerOneOf1;
import formsvc.client.model.CreateFormRequest;
import formsvc.client.model.CreateWebhookRequest;
import formsvc.client.model.DeliveryPage;
import formsvc.client.model.Form;
import formsvc.client.model.HostedResponseBody;
import formsvc.client.model.SavedResponse;
import formsvc.client.model.Submission;
import formsvc.client.model.SubmissionPage;
import formsvc.client.model.Webhook;
import java.util.UUID;
import java.util.stream.Collectors;

/**
 * What an integrator's Java program does with the generated client, in two steps around the form's
 * publishing (an operator's or the app's act, not the API's):
 *
 *   Smoke create  BASE_URL API_KEY WORKSPACE_ID RECEIVER_URL   a form and its webhook
 *   Smoke respond BASE_URL API_KEY FORM_ID WEBHOOK_ID          a response, then reads it back
 *
 * Each step prints one JSON object of what it saw, for tests/java-client.test.ts to check.
 */
public final class Smoke {
  private static final ObjectMapper json = new ObjectMapper();

  public static void main(String[] args) throws Exception {
    String base = args[1];
    ApiClient api = new ApiClient();
    api.updateBaseUri(base + "/api/v1");
    api.setRequestInterceptor(request -> request.header("Authorization", "Bearer " + args[2]));
    ObjectNode out = json.createObjectNode();
    try {
      switch (args[0]) {
        case "create" -> create(api, args[3], args[4], out);
        case "respond" -> respond(api, base, args[3], args[4], out);
        default -> throw new IllegalArgumentException("unknown step " + args[0]);
      }
    } catch (ApiException e) {
      out.put("status", e.getCode());
      out.put("error", e.getResponseBody());
    }
    System.out.println(json.writeValueAsString(out));
  }

  private static void create(ApiClient api, String workspaceId, String receiverUrl, ObjectNode out) throws Exception {
    out.put("email", new UsersApi(api).getCurrentUser().getEmail());
    // The document's blocks are a oneOf by `type`: read from JSON, as a program keeping its forms as files does.
    CreateFormRequest request = api.getObjectMapper().readValue(
        """
        {"workspaceId": "%s", "name": "Java sign-up", "document": {"title": "Java sign-up", "blocks": [
          {"type": "SHORT_TEXT", "key": "name", "question": "Your name", "required": true},
          {"type": "NUMBER", "key": "guests", "question": "Guests", "min": 0, "max": 10}]}}
        """.formatted(workspaceId),
        CreateFormRequest.class);
    FormsApi forms = new FormsApi(api);
    Form form = forms.createForm(request, UUID.randomUUID().toString());
    out.put("formId", form.getId());
    out.put("forms", forms.listForms(null, null, null, workspaceId).getItems().size());
    out.put("questionTypes", forms.listQuestions(form.getId()).getItems().stream().map(q -> q.getType().getValue()).collect(Collectors.joining(",")));
    WebhooksApi webhooks = new WebhooksApi(api);
    CreateWebhookRequest hook = new CreateWebhookRequest().formId(form.getId()).url(receiverUrl).subscriber("java");
    Webhook created = webhooks.createWebhook(hook, null);
    // The same subscriber's webhook asked for again is the one already there, not a second.
    Webhook again = webhooks.createWebhook(hook, null);
    out.put("webhookId", created.getId());
    out.put("sameWebhookAgain", again.getId().equals(created.getId()));
  }

  private static void respond(ApiClient api, String base, String formId, String webhookId, ObjectNode out) throws Exception {
    // The hosted endpoints live outside /api/v1 (their operations name their own server, which this
    // generator does not apply): a client of their own, on the gateway's root, without a key.
    ApiClient publicApi = new ApiClient();
    publicApi.updateBaseUri(base);
    SavedResponse saved = new HostedFormsApi(publicApi).submitResponse(
        formId, new HostedResponseBody().putAnswersItem("name", "Ada").putAnswersItem("guests", 2).completed(true), UUID.randomUUID().toString());
    out.put("responseId", saved.getResponseId());
    SubmissionsApi submissions = new SubmissionsApi(api);
    SubmissionPage page = submissions.listSubmissions(formId, null, null, null, "completed", null, null, null, null);
    out.put("submissions", page.getItems().size());
    Submission submission = submissions.getSubmission(formId, saved.getResponseId());
    // An answer is a oneOf by the question's type: a text question's value is a String, a number's a BigDecimal.
    out.put("name", ((AnswerOneOf) submission.getAnswers().get("name").getActualInstance()).getValue());
    out.put("guests", ((AnswerOneOf1) submission.getAnswers().get("guests").getActualInstance()).getValue().intValueExact());
    DeliveryPage deliveries = new WebhooksApi(api).listDeliveries(webhookId, null, null, null, null);
    out.put("deliveries", deliveries.getItems().size());
    out.put("webhookUrl", new WebhooksApi(api).getWebhook(webhookId).getUrl());
  }
}
