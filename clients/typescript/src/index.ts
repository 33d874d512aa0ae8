// opsd's typed client: `paths` and `components` are generated from the served OpenAPI document
// (`just client` regenerates src/schema.d.ts; CI fails when the committed file differs).
import createClient, { type Client, type ClientOptions } from "openapi-fetch";
import type { components, paths } from "./schema";

export type { components, paths };
export type Schemas = components["schemas"];
/** An RFC 9457 problem: `code` names it. */
export type Problem = Schemas["Problem"];

/** A client of the opsd at `baseUrl`, sending `token` as the bearer when given. */
export function createOpsdClient(baseUrl: string, token?: string, options: ClientOptions = {}): Client<paths> {
  const headers = token ? { Authorization: `Bearer ${token}` } : {};
  return createClient<paths>({ ...options, baseUrl, headers: { ...headers, ...(options.headers as object) } });
}
