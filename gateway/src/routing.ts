// Every router of the gateway: paths are case-sensitive, as the spec writes them (`/api/v1/FORMS` is a 404,
// not `/forms` under another name, which would let one resource answer at many addresses).
import express, { type Router } from "express";

export function newRouter(): Router {
  return express.Router({ caseSensitive: true });
}
