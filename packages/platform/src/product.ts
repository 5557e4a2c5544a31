// The product's name as people read it: in mail, on hosted pages, in authenticator apps and in the app
// (app/src writes it out, checked by tests/app-header.test.ts). One spelling, the README's.
export const productName = "formsvc";
