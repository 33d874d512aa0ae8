// The console after `opsd seed-demo`, as a newcomer first sees it: every page opened in Debian's
// chromium (JavaScript off, as people use it) and photographed, what the demo should fill checked,
// and every page run through axe-core (pinned, injected into a second context with scripts on).
// node demo.mjs <base-url> <token> <screenshot-dir>; prints the axe results as JSON; exits non-zero
// with the reasons when a check fails or a page has a serious or critical violation.
import { check, failures, launch, run } from "./run.mjs";
import { readFileSync, mkdirSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";

const [base, token, shots] = process.argv.slice(2);
const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");
mkdirSync(shots, { recursive: true });

const browser = await launch();

async function signedIn(options) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, ...options });
  await context.addCookies([{ name: "__session", value: token, domain: new URL(base).hostname, path: "/", httpOnly: true }]);
  return context.newPage();
}

const text = async (page, selector) => ((await page.locator(selector).first().textContent()) ?? "").trim();
const pages = {};
await run(browser, async () => {
  const page = await signedIn({ javaScriptEnabled: false });
  const open = async (name, path) => {
    const answer = await page.goto(`${base}${path}`);
    check(answer.status() === 200, `${path} answered ${answer.status()}`);
    await page.screenshot({ path: `${shots}/demo-${name}.png`, fullPage: true });
    pages[name] = path;
  };

  // The week opens on the latest week with sales: money in the tiles, a goals-met figure, a chart with scales.
  await open("week", "/console/week");
  check(!(await text(page, '[data-kpi="sales"] .value')).startsWith("$0.00"), "the week page opened on a week without sales");
  check(/^\d+%$/.test(await text(page, '[data-kpi="goalsMet"] .value')), "goals met has a figure");
  check((await page.locator("svg text.tick.sales").count()) >= 3, "the sales scale has ticks");
  check((await page.locator("svg text.tick.pct").count()) >= 3, "the labor % scale has ticks");
  check((await page.locator(".legend svg").count()) === 4, "the legend draws each mark");
  const unsold = await page.locator('tr[data-day]:has(td[data-sales="0"]) td:last-child').allTextContents();
  check(unsold.every((cell) => cell.trim() === "—"), `a day without sales shows a dash for goals met: ${unsold}`);

  // A week planned from the console's form: the proposal page once the engine is done.
  await open("plans", "/console/plans");
  await page.click("form.pickers button[type=submit]");
  const planPath = new URL(page.url()).pathname;
  check(/^\/console\/plans\/[0-9a-f-]{36}$/.test(planPath), `the form opened the proposal: ${page.url()}`);
  for (let i = 0; i < 60 && (await page.locator("table.roster").count()) === 0; i++) {
    await page.waitForTimeout(1000);
    await page.reload();
  }
  await open("plan", planPath);
  check((await page.locator("table.roster tr[data-employee]").count()) >= 3, "the proposal has employees by days");
  check((await page.locator("table.roster td.shift").count()) >= 14, "every day is staffed");
  check((await page.locator("svg[role=img] rect.bar").count()) >= 14, "the chart has a bar per day and block");
  check(["optimal", "feasible"].includes(await text(page, "[data-solver]")), "the solver's status is shown");

  await open("compliance", "/console/compliance");
  check((await page.locator("table.grid").count()) >= 1, "a grid per location");
  check((await page.locator("td.slot.filed").count()) > 0, "most reports are filed");
  check((await page.locator("td.slot.missing").count()) > 0, "a few reports are missing");
  await open("compliance-current", "/console/compliance?week=current");
  check((await page.locator("td.slot.due").count()) > 0, "this week has reports not yet due");

  await open("incidents", "/console/incidents");
  // The open ones are listed (the resolved one is not: the Rust side checks it is there).
  for (const status of ["reported", "investigating", "deferred"]) {
    check((await page.locator(`td[data-status="${status}"]`).count()) > 0, `an incident is ${status}`);
  }
  const detail = await page.locator('tr[data-incident]:has(td[data-status="investigating"]) a').first().getAttribute("href");
  await open("incident", detail);
  check((await page.locator("text=refrigeration contractor").count()) === 1, "the incident's comments are shown");

  await open("jobs", "/console/jobs");
  const jobs = await page.locator("tr[data-job]").count();
  const ran = await page.locator("tr[data-job] [data-status]").count();
  const off = await page.locator('tr[data-job] [data-alarm="off"]').count();
  check(jobs >= 10 && ran + off === jobs, `every job has run or is off (${ran} ran, ${off} off, of ${jobs})`);
  check((await page.locator('tr[data-job] [data-alarm="raised"]').count()) === 0, "no alarm on the demo's jobs");
  await open("queue", "/console/queue");
  check((await page.locator("tr[data-event]").count()) === 1, "one failed guest event to retry");

  // axe-core on every page, with scripts on (the injected script needs them) and the page's CSP set aside.
  const audited = await signedIn({ javaScriptEnabled: true, bypassCSP: true });
  const results = {};
  for (const [name, path] of Object.entries(pages)) {
    await audited.goto(`${base}${path}`);
    await audited.addScriptTag({ content: axeSource });
    const violations = await audited.evaluate(async () => (await globalThis.axe.run(document, { resultTypes: ["violations"] })).violations);
    results[name] = violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.length }));
    for (const v of violations.filter((v) => v.impact === "serious" || v.impact === "critical")) {
      failures.push(`axe on ${path}: ${v.impact} ${v.id} (${v.nodes.length}): ${v.nodes.map((n) => n.target.join(" ")).slice(0, 3).join("; ")}`);
    }
  }
  // The legend's marks are drawn in the chart's own colours.
  await audited.goto(`${base}/console/week`);
  const colours = await audited.evaluate(() =>
    ["bar", "goal", "labor", "target"].map((mark) => {
      const style = (selector) => { const s = getComputedStyle(document.querySelector(selector)); return `${s.fill} ${s.stroke} ${s.strokeDasharray}`; };
      return [mark, style(`svg[role="img"] .${mark}`), style(`.legend .${mark}`)];
    }),
  );
  for (const [mark, chart, legend] of colours) check(chart === legend, `the legend's ${mark} (${legend}) is not the chart's (${chart})`);
  writeFileSync(`${shots}/axe.json`, JSON.stringify(results, null, 2));
  console.log(JSON.stringify(results));
});
