// Drives Debian's chromium through the operator console with JavaScript off, as the people who
// use it would: node console.mjs <base-url> <scenario.json> <screenshot-dir>. Exits non-zero with
// the reasons when a step fails, and when any request left the server's origin.
import { check, launch, run } from "./run.mjs";
import { readFileSync, mkdirSync } from "node:fs";

const [base, scenarioPath, shots] = process.argv.slice(2);
const scenario = JSON.parse(readFileSync(scenarioPath, "utf8"));
const origin = new URL(base).origin;
mkdirSync(shots, { recursive: true });

const offOrigin = [];

const browser = await launch();

async function as(token) {
  const context = await browser.newContext({ javaScriptEnabled: false, viewport: { width: 1280, height: 900 } });
  const url = new URL(base);
  await context.addCookies([{ name: "__session", value: token, domain: url.hostname, path: "/", httpOnly: true }]);
  const page = await context.newPage();
  page.on("request", (request) => {
    if (new URL(request.url()).origin !== origin) offOrigin.push(request.url());
  });
  return page;
}

await run(browser, async () => {
  // The week: seven days of sales against the goal, the KPI tiles.
  const admin = await as(scenario.adminToken);
  const week = await admin.goto(`${base}/console/week?locationId=${scenario.locationId}&weekOf=${scenario.weekOf}`);
  check(week.status() === 200, `the week page answered ${week.status()}`);
  check((await admin.locator("svg[role=img] rect.bar").count()) === 7, "the chart has seven days");
  check((await admin.locator("svg[role=img] line.goal").count()) === 7, "the chart shows the goal on each day");
  check((await admin.locator("[data-kpi]").count()) === 4, "the KPI tiles");
  await admin.screenshot({ path: `${shots}/console-week.png`, fullPage: true });
  const compliance = await admin.goto(`${base}/console/compliance`);
  check(compliance.status() === 200, `the compliance page answered ${compliance.status()}`);
  check((await admin.locator(`section[data-location="${scenario.locationId}"] table.grid`).count()) === 1, "the location's grid is shown");
  await admin.screenshot({ path: `${shots}/console-compliance.png`, fullPage: true });

  // An incident: opened from the list, its status changed with the form.
  const member = await as(scenario.memberToken);
  await member.goto(`${base}/console/incidents`);
  await member.locator(`tr[data-incident="${scenario.incidentId}"] a`).click();
  check(member.url().endsWith(`/console/incidents/${scenario.incidentId}`), `opened ${member.url()}`);
  await member.selectOption("select[name=status]", "investigating");
  await member.click("button[type=submit]");
  check((await member.locator('strong[data-status="investigating"]').count()) === 1, "the status changed");
  await member.screenshot({ path: `${shots}/console-incident.png`, fullPage: true });

  // A member cannot open the operator pages, nor plan the week (managers do).
  for (const path of ["/console/jobs", "/console/queue", "/console/plans"]) {
    const refused = await member.goto(`${base}${path}`);
    check(refused.status() === 403, `${path} answered a member ${refused.status()}`);
    check(!(await member.locator("table").count()), `${path} showed a member no data`);
  }

  // The operator: every job, and a failed guest event retried.
  const operator = await as(scenario.operatorToken);
  const jobs = await operator.goto(`${base}/console/jobs`);
  check(jobs.status() === 200, `the jobs page answered ${jobs.status()}`);
  check((await operator.locator("tr[data-job]").count()) >= 8, "every job is listed");
  await operator.screenshot({ path: `${shots}/console-jobs.png`, fullPage: true });
  await operator.goto(`${base}/console/queue`);
  const failedRow = operator.locator(`tr[data-event="${scenario.failedEventId}"]`);
  check((await failedRow.count()) === 1, "the failed event is listed");
  await operator.screenshot({ path: `${shots}/console-queue.png`, fullPage: true });
  await failedRow.locator("button").click();
  check(operator.url().endsWith("/console/queue"), `back on the queue: ${operator.url()}`);
  check((await operator.locator(`tr[data-event="${scenario.failedEventId}"]`).count()) === 0, "the retried event is no longer failed");
}, "console browser run: all steps held; no request left the origin", () => {
  check(offOrigin.length === 0, `requests left the server's origin: ${offOrigin.join(", ")}`);
});
