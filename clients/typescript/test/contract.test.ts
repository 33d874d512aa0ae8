// The client's contract test: every operation of the served document, called through the typed
// client against a live server on a seeded database, answered as documented; and for each, one
// refusal read as a typed RFC 9457 problem. tests/api/client_contract.rs starts the servers and
// runs this file (compiled by tsc) with node's test runner.
import assert from "node:assert/strict";
import { createHmac, randomUUID } from "node:crypto";
import { test } from "node:test";

import { parseJsonEventStream, readUIMessageStream, uiMessageChunkSchema, type UIMessage } from "ai";

import { createOpsdClient, type Problem } from "../src/index.js";

const env = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
};

const base = env("OPSD_URL");
/** A server with nothing optional configured, whose database has been made unreachable. */
const bare = env("OPSD_BARE_URL");
const team = env("TEAM_ID");
const appOrigin = env("APP_ORIGIN");

const anonymous = createOpsdClient(base);
const admin = createOpsdClient(base, env("ADMIN_TOKEN"));
const member = createOpsdClient(base, env("MEMBER_TOKEN"));
const apiKey = createOpsdClient(base, env("API_KEY"));
const cron = createOpsdClient(base, env("CRON_SECRET"));
/** The console's session: the identity provider's cookie, from the app's origin. */
const session = createOpsdClient(base, undefined, {
  headers: { cookie: `__session=${env("ADMIN_TOKEN")}`, origin: appOrigin },
});
const foreignSession = createOpsdClient(base, undefined, {
  headers: { cookie: `__session=${env("ADMIN_TOKEN")}`, origin: "https://elsewhere.example" },
});
const bareClient = createOpsdClient(bare, env("API_KEY"));

/** The operations this file called, as `METHOD /path`: at the end they must be all the document's. */
const called = new Set<string>();
const calls = (method: string, path: string) => called.add(`${method} ${path}`);

/** A refusal: the status and the problem's `code`, read from the client's `error`, typed as a problem. */
function refused(answer: { response: Response; error?: Problem }, status: number, code: string): Problem {
  assert.equal(answer.response.status, status, `expected ${status} ${code}`);
  assert.equal(answer.response.headers.get("content-type"), "application/problem+json");
  const problem = answer.error;
  assert.ok(problem, "a problem body");
  assert.equal(problem.code, code);
  assert.equal(problem.status, status);
  return problem;
}

function ok<T>(answer: { data?: T; response: Response; error?: unknown }, status = 200): T {
  assert.equal(answer.response.status, status, `${answer.response.url}: ${JSON.stringify(answer.error)}`);
  assert.ok(answer.data !== undefined, `${answer.response.url} has a body`);
  return answer.data;
}

/** Signs a delivery as a Standard Webhooks sender does. */
function signed(secret: string, body: string) {
  const id = `msg_${randomUUID()}`;
  const timestamp = Math.floor(Date.now() / 1000).toString();
  const key = Buffer.from(secret.replace(/^whsec_/, ""), "base64");
  const signature = `v1,${createHmac("sha256", key).update(`${id}.${timestamp}.${body}`).digest("base64")}`;
  return { "webhook-id": id, "webhook-timestamp": timestamp, "webhook-signature": signature };
}

const today = new Date().toISOString().slice(0, 10);
/** The Saturday that starts this week (weeks run Saturday to Friday). */
const weekStart = (() => {
  const day = new Date(`${today}T00:00:00Z`);
  day.setUTCDate(day.getUTCDate() - ((day.getUTCDay() + 1) % 7));
  return day.toISOString().slice(0, 10);
})();
let locationId = "";
const slug = `contract-${randomUUID().slice(0, 8)}`;

test("locations and team settings", async () => {
  calls("POST", "/api/locations");
  const body = { name: "Contract Downtown", slug, timezone: "America/Chicago" } as const;
  const created = ok(await admin.POST("/api/locations", { body }), 201);
  locationId = created.id;
  assert.equal(created.slug, slug);
  refused(await admin.POST("/api/locations", { body }), 409, "conflict");

  calls("GET", "/api/locations");
  const listed = ok(await admin.GET("/api/locations", { params: { query: { limit: 50 } } }));
  assert.ok(listed.some((location) => location.id === locationId));
  refused(await anonymous.GET("/api/locations"), 401, "unauthorized");

  calls("GET", "/api/team/settings");
  ok(await admin.GET("/api/team/settings"));
  refused(await anonymous.GET("/api/team/settings"), 401, "unauthorized");

  calls("PUT", "/api/team/settings");
  ok(await admin.PUT("/api/team/settings", { body: { chatWebhookUrl: null } }));
  refused(await member.PUT("/api/team/settings", { body: { chatWebhookUrl: null } }), 403, "forbidden");
});

test("sales, goals and the labor reports", async () => {
  calls("POST", "/api/analytics/sales");
  const rows = [0, 1, 2].map((offset) => {
    const date = new Date(`${weekStart}T00:00:00Z`);
    date.setUTCDate(date.getUTCDate() + offset);
    return { locationId, date: date.toISOString().slice(0, 10), block: "Dinner", food: 900, beverage: 80, other: 0 } as const;
  });
  ok(await apiKey.POST("/api/analytics/sales", { body: { teamId: team, rows } }));
  refused(await anonymous.POST("/api/analytics/sales", { body: { teamId: team, rows } }), 401, "unauthorized");

  calls("PUT", "/api/analytics/goals");
  const goals = [0, 1, 2, 3, 4, 5, 6].map((dayOfWeek) => ({ dayOfWeek, salesGoal: 1400, laborPctTarget: 28, splhTarget: 55 }));
  ok(await apiKey.PUT("/api/analytics/goals", { body: { teamId: team, goals } }));
  const tooMany = [...goals, ...goals];
  refused(await apiKey.PUT("/api/analytics/goals", { body: { teamId: team, goals: tooMany } }), 400, "validation_failed");

  calls("GET", "/api/analytics/goals");
  ok(await apiKey.GET("/api/analytics/goals", { params: { query: { teamId: team } } }));
  refused(await anonymous.GET("/api/analytics/goals", { params: { query: { teamId: team } } }), 401, "unauthorized");

  for (const path of ["/api/analytics/optimization", "/api/analytics/variance", "/api/analytics/forecast"] as const) {
    calls("GET", path);
    const first = await apiKey.GET(path, { params: { query: { teamId: team, weekOf: weekStart } } });
    ok(first);
    const etag = first.response.headers.get("etag");
    assert.ok(etag, `${path} sends an ETag`);
    const again = await apiKey.GET(path, { params: { query: { teamId: team, weekOf: weekStart }, header: { "If-None-Match": etag } } });
    assert.equal(again.response.status, 304, `${path} answers 304 to its own ETag`);
    refused(await apiKey.GET(path, { params: { query: { teamId: team, weekOf: "last week" } } }), 400, "validation_failed");
  }

  calls("GET", "/api/schedule/{location_slug}");
  const schedule = await apiKey.GET("/api/schedule/{location_slug}", { params: { path: { location_slug: slug } } });
  ok(schedule);
  assert.ok(schedule.response.headers.get("sunset"), "the legacy view names its sunset");
  const unknown = { params: { path: { location_slug: "nowhere" } } };
  refused(await apiKey.GET("/api/schedule/{location_slug}", unknown), 404, "not_found");
});

test("incidents, their status and comments", async () => {
  calls("POST", "/api/incidents");
  const report = { locationId, type: "Spill / Slip Hazard", severity: "medium", notes: "Wet floor by the walk-in" } as const;
  const incident = ok(await member.POST("/api/incidents", { body: report }), 201);
  refused(await member.POST("/api/incidents", { body: { ...report, notes: "" } }), 400, "validation_failed");

  calls("GET", "/api/incidents");
  const listed = ok(await member.GET("/api/incidents", { params: { query: { locationId, limit: 10 } } }));
  assert.ok(listed.items.some((row) => row.id === incident.id));
  refused(await anonymous.GET("/api/incidents"), 401, "unauthorized");

  const id = { params: { path: { id: incident.id } } };
  const missing = { params: { path: { id: randomUUID() } } };
  calls("GET", "/api/incidents/{id}");
  const detail = await member.GET("/api/incidents/{id}", id);
  assert.equal(ok(detail).id, incident.id);
  const etag = detail.response.headers.get("etag") ?? "";
  const cached = await member.GET("/api/incidents/{id}", { params: { ...id.params, header: { "If-None-Match": etag } } });
  assert.equal(cached.response.status, 304);
  refused(await member.GET("/api/incidents/{id}", missing), 404, "not_found");

  calls("PATCH", "/api/incidents/{id}");
  const changed = ok(await admin.PATCH("/api/incidents/{id}", { ...id, body: { status: "investigating" } }));
  assert.equal(changed.status, "investigating");
  refused(await admin.PATCH("/api/incidents/{id}", { ...missing, body: { status: "resolved" } }), 404, "not_found");

  calls("POST", "/api/incidents/{id}/comments");
  ok(await member.POST("/api/incidents/{id}/comments", { ...id, body: { content: "Mopped and signed." } }), 201);
  refused(await member.POST("/api/incidents/{id}/comments", { ...id, body: { content: "" } }), 400, "validation_failed");
});

test("contacts", async () => {
  calls("POST", "/api/contacts");
  const contact = ok(await admin.POST("/api/contacts", { body: { name: "Pat Plumber", phone: "+1 312 555 0100" } }), 201);
  refused(await admin.POST("/api/contacts", { body: { name: "" } }), 400, "validation_failed");

  calls("GET", "/api/contacts");
  assert.ok(ok(await admin.GET("/api/contacts")).some((row) => row.id === contact.id));
  refused(await admin.GET("/api/contacts", { params: { query: { cursor: "not-one-of-ours" } } }), 400, "validation_failed");

  calls("DELETE", "/api/contacts/{id}");
  const removed = await admin.DELETE("/api/contacts/{id}", { params: { path: { id: contact.id } } });
  assert.equal(removed.response.status, 204);
  refused(await admin.DELETE("/api/contacts/{id}", { params: { path: { id: randomUUID() } } }), 404, "not_found");
});

test("announcements", async () => {
  calls("POST", "/api/announcements");
  const body = { title: "New menu", body: "Tasting at 3 pm.", publishAt: new Date().toISOString() };
  ok(await admin.POST("/api/announcements", { body }), 201);
  refused(await member.POST("/api/announcements", { body }), 403, "forbidden");

  calls("GET", "/api/announcements");
  assert.ok(ok(await member.GET("/api/announcements")).some((row) => row.title === "New menu"));
  refused(await anonymous.GET("/api/announcements"), 401, "unauthorized");
});

test("planning the week: availability and schedule proposals", async () => {
  calls("PUT", "/api/planning/availability");
  const set = ok(await admin.PUT("/api/planning/availability", { body: { locationId, employees: [] } }));
  assert.deepEqual(set, { locationId, employees: [] });
  const stranger = { locationId, employees: [{ employeeKey: "nobody", unavailableWeekdays: [2] }] };
  refused(await admin.PUT("/api/planning/availability", { body: stranger }), 422, "unknown_employee");

  calls("GET", "/api/planning/availability");
  assert.deepEqual(ok(await admin.GET("/api/planning/availability", { params: { query: { locationId } } })).employees, []);
  refused(await member.GET("/api/planning/availability", { params: { query: { locationId } } }), 403, "forbidden");

  calls("POST", "/api/planning/schedule-proposals");
  const week = { locationId, weekOf: weekStart, timeLimitSeconds: 5 };
  refused(await admin.POST("/api/planning/schedule-proposals", { body: week }), 409, "insufficient_history");
  refused(
    await admin.POST("/api/planning/schedule-proposals", { body: { ...week, timeLimitSeconds: 0 } }),
    400,
    "validation_failed",
  );

  calls("GET", "/api/planning/schedule-proposals");
  assert.deepEqual(ok(await admin.GET("/api/planning/schedule-proposals", { params: { query: { locationId } } })), []);

  calls("GET", "/api/planning/schedule-proposals/{id}");
  const missing = { params: { path: { id: randomUUID() } } };
  refused(await admin.GET("/api/planning/schedule-proposals/{id}", missing), 404, "not_found");

  calls("POST", "/api/planning/schedule-proposals/{id}/publish");
  refused(await admin.POST("/api/planning/schedule-proposals/{id}/publish", missing), 404, "not_found");
  refused(await member.POST("/api/planning/schedule-proposals/{id}/publish", missing), 403, "forbidden");

  calls("GET", "/api/planning/rules");
  const defaults = ok(await admin.GET("/api/planning/rules"));
  assert.equal(defaults.setByTeam, false);
  refused(await member.GET("/api/planning/rules"), 403, "forbidden");

  calls("PUT", "/api/planning/rules");
  const { setByTeam: _, ...rules } = defaults;
  const changed = ok(await admin.PUT("/api/planning/rules", { body: { ...rules, minRestHours: 11 } }));
  assert.deepEqual([changed.minRestHours, changed.setByTeam], [11, true]);
  refused(await admin.PUT("/api/planning/rules", { body: { ...rules, noticeDays: 60 } }), 400, "validation_failed");

  calls("GET", "/api/planning/shift-times");
  assert.deepEqual(ok(await admin.GET("/api/planning/shift-times", { params: { query: { locationId } } })).shifts, []);
  refused(await member.GET("/api/planning/shift-times", { params: { query: { locationId } } }), 403, "forbidden");

  calls("PUT", "/api/planning/shift-times");
  const dinner = { department: "FOH", block: "Dinner", start: "16:30", hours: 5 } as const;
  const times = ok(await admin.PUT("/api/planning/shift-times", { body: { locationId, shifts: [dinner] } }));
  assert.deepEqual(times.shifts, [{ ...dinner, source: "set" }]);
  const late = { body: { locationId, shifts: [{ ...dinner, start: "25:00" }] } };
  refused(await admin.PUT("/api/planning/shift-times", late), 400, "validation_failed");
});

test("shift and manager reports", async () => {
  calls("POST", "/api/reports/shift");
  const shift = { locationId, date: today, shift: "morning", actualSales: 1200, goalSales: 1100 } as const;
  ok(await member.POST("/api/reports/shift", { body: shift }), 201);
  refused(await member.POST("/api/reports/shift", { body: { ...shift, actualSales: -1 } }), 400, "validation_failed");

  calls("GET", "/api/reports/shift");
  assert.equal(ok(await member.GET("/api/reports/shift", { params: { query: { locationId } } })).length, 1);
  refused(await anonymous.GET("/api/reports/shift", { params: { query: { locationId } } }), 401, "unauthorized");

  calls("POST", "/api/reports/manager");
  const manager = { locationId, date: today, totalSales: 3400 };
  ok(await admin.POST("/api/reports/manager", { body: manager }), 201);
  refused(await admin.POST("/api/reports/manager", { body: { ...manager, date: "tomorrow" } }), 400, "validation_failed");

  calls("GET", "/api/reports/manager");
  assert.equal(ok(await admin.GET("/api/reports/manager", { params: { query: { locationId } } })).length, 1);
  refused(await anonymous.GET("/api/reports/manager", { params: { query: { locationId } } }), 401, "unauthorized");
});

test("coupon offers, the automation's reservations and redemption", async () => {
  calls("POST", "/api/coupons/offers");
  const offer = ok(await admin.POST("/api/coupons/offers", { body: { locationId, name: "Free fries", capacity: 2 } }), 201);
  refused(await admin.POST("/api/coupons/offers", { body: { locationId, name: "", capacity: 2 } }), 400, "validation_failed");

  calls("GET", "/api/coupons/offers/{id}");
  assert.equal(ok(await admin.GET("/api/coupons/offers/{id}", { params: { path: { id: offer.id } } })).held, 0);
  refused(await admin.GET("/api/coupons/offers/{id}", { params: { path: { id: randomUUID() } } }), 404, "not_found");

  calls("POST", "/api/automation/coupons");
  const reservationId = randomUUID();
  const expiresAt = new Date(Date.now() + 3_600_000).toISOString();
  const event = {
    type: "reservation.created",
    eventId: `evt_${reservationId}`,
    occurredAt: new Date().toISOString(),
    teamId: team,
    locationId,
    data: { reservationId, offerId: offer.id, guestId: "guest-1", expiresAt },
  };
  const raw = JSON.stringify(event);
  const delivery = { params: { header: signed(env("COUPON_WEBHOOK_SECRET"), raw) }, body: event, bodySerializer: () => raw };
  const accepted = await anonymous.POST("/api/automation/coupons", delivery);
  assert.equal(accepted.response.status, 202);
  const forged = { params: { header: signed("whsec_Zm9yZ2VkLXNlY3JldC1mb3ItdGhlLXRlc3Q=", raw) }, body: event, bodySerializer: () => raw };
  refused(await anonymous.POST("/api/automation/coupons", forged), 401, "unauthorized");

  calls("GET", "/api/coupons/reservations/{id}");
  const reservation = { params: { path: { id: reservationId } } };
  let answer = await admin.GET("/api/coupons/reservations/{id}", reservation);
  for (let tries = 0; answer.response.status === 404 && tries < 100; tries += 1) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    answer = await admin.GET("/api/coupons/reservations/{id}", reservation);
  }
  assert.equal(ok(answer).state, "active");
  refused(await admin.GET("/api/coupons/reservations/{id}", { params: { path: { id: randomUUID() } } }), 404, "not_found");

  calls("POST", "/api/coupons/reservations/{id}/redeem");
  assert.equal(ok(await admin.POST("/api/coupons/reservations/{id}/redeem", reservation)).state, "redeemed");
  refused(await anonymous.POST("/api/coupons/reservations/{id}/redeem", reservation), 401, "unauthorized");
});

test("web push: the key, subscribing, sending, unsubscribing", async () => {
  calls("GET", "/api/push/vapid-public-key");
  assert.ok(ok(await anonymous.GET("/api/push/vapid-public-key")).publicKey);
  refused(await bareClient.GET("/api/push/vapid-public-key"), 503, "not_configured");

  const subscription = { endpoint: env("PUSH_ENDPOINT"), keys: { p256dh: env("PUSH_P256DH"), auth: env("PUSH_AUTH") } };
  calls("POST", "/api/push/subscribe");
  ok(await session.POST("/api/push/subscribe", { body: subscription }));
  refused(await foreignSession.POST("/api/push/subscribe", { body: subscription }), 403, "forbidden");

  calls("POST", "/api/push/send");
  const sent = ok(await admin.POST("/api/push/send", { body: { title: "Hello", body: "From the contract test" } }));
  assert.equal(sent.sent, 1);
  refused(await anonymous.POST("/api/push/send", { body: { title: "Hello" } }), 401, "unauthorized");

  calls("DELETE", "/api/push/subscribe");
  ok(await session.DELETE("/api/push/subscribe", { body: { endpoint: subscription.endpoint } }));
  refused(await foreignSession.DELETE("/api/push/subscribe", { body: { endpoint: subscription.endpoint } }), 403, "forbidden");
});

test("the assistant's stream, read by the client and parsed by the AI SDK", async () => {
  calls("POST", "/api/assistant/chat");
  const messages = [{ id: "m1", role: "user", parts: [{ type: "text", text: "How are we doing this week?" }] }];
  const answer = await member.POST("/api/assistant/chat", { body: { messages }, parseAs: "stream" });
  assert.equal(answer.response.status, 200);
  assert.equal(answer.response.headers.get("x-vercel-ai-ui-message-stream"), "v1");
  const body = answer.data;
  assert.ok(body, "a stream");
  const errors: string[] = [];
  const chunks = parseJsonEventStream({ stream: body, schema: uiMessageChunkSchema }).pipeThrough(
    new TransformStream({
      transform(part, controller) {
        if (part.success) controller.enqueue(part.value);
        else errors.push(String(part.error));
      },
    }),
  );
  let last: UIMessage | undefined;
  for await (const message of readUIMessageStream({ stream: chunks, onError: (error) => errors.push(String(error)) })) {
    last = message;
  }
  assert.deepEqual(errors, []);
  const text = (last?.parts ?? []).flatMap((part) => (part.type === "text" ? [part.text] : [])).join("");
  assert.equal(text, env("ASSISTANT_ANSWER"));
  refused(await anonymous.POST("/api/assistant/chat", { body: { messages } }), 401, "unauthorized");
});

test("the identity provider's webhook", async () => {
  calls("POST", "/api/webhooks/identity");
  const event = { data: { deleted: true, id: "user_gone", object: "user" }, object: "event", type: "user.deleted" };
  const raw = JSON.stringify(event);
  const headers = signed(env("IDENTITY_WEBHOOK_SECRET"), raw);
  const answer = await anonymous.POST("/api/webhooks/identity", { params: { header: headers }, body: event, bodySerializer: () => raw });
  assert.deepEqual(ok(answer), { received: true });
  const bareAnswer = await createOpsdClient(bare).POST("/api/webhooks/identity", {
    params: { header: headers },
    body: event,
    bodySerializer: () => raw,
  });
  refused(bareAnswer, 503, "not_configured");
});

test("the cron jobs", async () => {
  const jobs = [
    "/cron/aggregate-heroes",
    "/cron/check-compliance",
    "/cron/expire-coupons",
    "/cron/prune-idempotency-keys",
    "/cron/prune-soft-deleted-contacts",
    "/cron/publish-scheduled-announcements",
    "/cron/report-reminder",
    "/cron/sync-7shifts-punches",
    "/cron/sync-7shifts-roles",
    "/cron/sync-schedule-from-7shifts",
  ] as const;
  for (const job of jobs) {
    calls("GET", job);
    // Some jobs answer plain text (as the scheduler reads them), so the body is read as text.
    const run = await cron.GET(job, { parseAs: "text" });
    assert.equal(run.response.status, 200, `${job}: ${JSON.stringify(run.error)}`);
    refused(await anonymous.GET(job, { parseAs: "text" }), 401, "unauthorized");
  }
  calls("GET", "/cron/keep-alive");
  ok(await anonymous.GET("/cron/keep-alive", { parseAs: "text" }));
  refused(await bareClient.GET("/cron/keep-alive", { parseAs: "text" }), 503, "unavailable");
});

test("health and metrics", async () => {
  calls("GET", "/health/live");
  // Liveness has no refusal: it answers 200 whenever the process can answer at all.
  assert.equal(ok(await anonymous.GET("/health/live")).status, "live");
  assert.equal(ok(await bareClient.GET("/health/live")).status, "live");

  calls("GET", "/health/ready");
  ok(await anonymous.GET("/health/ready"));
  const unready = await bareClient.GET("/health/ready");
  assert.equal(unready.response.status, 503);
  assert.notEqual(unready.error?.status, "ok");

  calls("GET", "/metrics");
  const metrics = await anonymous.GET("/metrics", { parseAs: "text" });
  assert.match(ok(metrics), /^# HELP /m);
  refused(await bareClient.GET("/metrics", { parseAs: "text" }), 404, "not_found");
});

test("every documented operation was called, and only those", async () => {
  const document = (await (await fetch(`${base}/openapi.json`)).json()) as { paths: Record<string, Record<string, unknown>> };
  const methods = new Set(["get", "put", "post", "patch", "delete"]);
  const documented = Object.entries(document.paths).flatMap(([path, item]) =>
    Object.keys(item)
      .filter((method) => methods.has(method))
      .map((method) => `${method.toUpperCase()} ${path}`),
  );
  assert.deepEqual([...called].sort(), documented.sort(), "every documented operation is called, and only those");
});
