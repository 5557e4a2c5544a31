// The forms "New form" can start from: blank, or one of these documents (validated against the
// form-document schema in templates.spec.ts). Keys are given, readable and unique in each document.
import type { FormDocument } from "../types.ts";

export interface FormTemplate {
  id: string;
  /** The new form's name, and the card's title. */
  name: string;
  /** One line on the card: what the template asks. */
  summary: string;
  document: FormDocument;
}

export const formTemplates: readonly FormTemplate[] = [
  {
    id: "contact",
    name: "Contact us",
    summary: "Name, email, topic and message.",
    document: {
      title: "Contact us",
      blocks: [
        { type: "PARAGRAPH", text: "Send us a message and we will get back to you within two working days." },
        { key: "q_name", type: "SHORT_TEXT", question: "Your name", required: true },
        { key: "q_email", type: "EMAIL", question: "Your email", required: true },
        {
          key: "q_topic",
          type: "DROPDOWN",
          question: "What is it about?",
          options: [
            { id: "question", text: "A question" },
            { id: "support", text: "Support" },
            { id: "sales", text: "Sales" },
            { id: "other", text: "Something else" },
          ],
        },
        { key: "q_message", type: "LONG_TEXT", question: "Your message", required: true },
      ],
    },
  },
  {
    id: "event-signup",
    name: "Event sign-up",
    summary: "Attendee details, sessions, dietary needs.",
    document: {
      title: "Event sign-up",
      blocks: [
        { type: "HEADING", text: "Join us" },
        { key: "q_name", type: "SHORT_TEXT", question: "Your full name", required: true },
        { key: "q_email", type: "EMAIL", question: "Email address", required: true },
        {
          key: "q_sessions",
          type: "CHECKBOXES",
          question: "Which sessions will you attend?",
          required: true,
          options: [
            { id: "morning", text: "Morning talks" },
            { id: "workshop", text: "Afternoon workshop" },
            { id: "dinner", text: "Dinner" },
          ],
        },
        {
          key: "q_diet",
          type: "MULTIPLE_CHOICE",
          question: "Dietary needs",
          options: [
            { id: "none", text: "None" },
            { id: "vegetarian", text: "Vegetarian" },
            { id: "vegan", text: "Vegan" },
            { id: "other", text: "Other (tell us below)" },
          ],
        },
        { key: "q_notes", type: "LONG_TEXT", question: "Anything we should know?" },
      ],
      hiddenFields: [{ name: "utm_source" }],
    },
  },
  {
    id: "feedback",
    name: "Feedback",
    summary: "A rating, what worked, what to improve.",
    document: {
      title: "Tell us what you think",
      blocks: [
        { key: "q_rating", type: "RATING", question: "How would you rate your experience?", required: true, max: 5 },
        {
          key: "q_recommend",
          type: "MULTIPLE_CHOICE",
          question: "Would you recommend us to a friend?",
          options: [
            { id: "yes", text: "Yes" },
            { id: "maybe", text: "Maybe" },
            { id: "no", text: "No" },
          ],
        },
        { key: "q_liked", type: "LONG_TEXT", question: "What did you like?" },
        { key: "q_improve", type: "LONG_TEXT", question: "What could we do better?" },
        { key: "q_email", type: "EMAIL", question: "Your email, if we may follow up" },
      ],
    },
  },
  {
    id: "job-application",
    name: "Job application",
    summary: "Contact details, role, CV upload, motivation.",
    document: {
      title: "Job application",
      blocks: [
        { type: "HEADING", text: "Apply to join the team" },
        { key: "q_name", type: "SHORT_TEXT", question: "Full name", required: true },
        { key: "q_email", type: "EMAIL", question: "Email address", required: true },
        { key: "q_phone", type: "PHONE", question: "Phone number" },
        {
          key: "q_role",
          type: "DROPDOWN",
          question: "Which role are you applying for?",
          required: true,
          options: [
            { id: "engineering", text: "Engineering" },
            { id: "design", text: "Design" },
            { id: "support", text: "Customer support" },
          ],
        },
        { key: "q_portfolio", type: "URL", question: "Portfolio or LinkedIn" },
        { type: "PAGE_BREAK" },
        { key: "q_cv", type: "FILE", question: "Upload your CV", required: true, description: "PDF or Word, up to 10 MiB." },
        { key: "q_motivation", type: "LONG_TEXT", question: "Why do you want to work with us?", required: true },
        { key: "q_start", type: "DATE", question: "Earliest start date" },
      ],
      hiddenFields: [{ name: "source" }],
    },
  },
];
