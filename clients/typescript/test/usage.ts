// Type-level uses of the client, checked by `tsc --noEmit --strict` (just client-check): a change
// of the document that breaks them fails CI before a client would.
import { createOpsdClient, type Schemas } from "../src/index";

const api = createOpsdClient("http://127.0.0.1:8080", "a-session-token");

export async function firstContacts(): Promise<Schemas["Contact"][]> {
  const { data, response } = await api.GET("/api/contacts", { params: { query: { limit: 50 } } });
  if (!data) throw new Error(`contacts: ${response.status}`);
  return data;
}

export async function report(locationId: string): Promise<Schemas["Incident"]> {
  const body: Schemas["IncidentRequest"] = { locationId, type: "Injury", severity: "high", notes: "Cut on the slicer" };
  const { data, response } = await api.POST("/api/incidents", { body });
  if (!data) throw new Error(`report: ${response.status}`);
  return data;
}
