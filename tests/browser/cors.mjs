// A page on another origin calls the API from Debian's chromium, as a browser client would:
// node cors.mjs <api-base> <listed-page-origin> <unlisted-page-origin> <token>. The listed origin's
// call (with a bearer token and an Idempotency-Key, so the browser sends a preflight) is answered
// and readable; the unlisted origin's is refused by the browser. Exits non-zero when not.
import { check, launch, run } from "./run.mjs";

const [api, listed, unlisted, token] = process.argv.slice(2);
const browser = await launch();

async function callFrom(origin) {
  const page = await (await browser.newContext()).newPage();
  await page.goto(`${origin}/`);
  return page.evaluate(async ({ api, token }) => {
    try {
      const answer = await fetch(`${api}/api/locations`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json", "idempotency-key": "cors-1" },
        body: JSON.stringify({ name: "Uptown", slug: "uptown", timezone: "America/Chicago" }),
      });
      return { status: answer.status, body: await answer.json(), requestId: answer.headers.get("x-request-id") };
    } catch (error) {
      return { refused: String(error) };
    }
  }, { api, token });
}

await run(browser, async () => {
  const allowed = await callFrom(listed);
  check(allowed.status === 201 && allowed.body?.slug === "uptown" && allowed.requestId, `the listed origin's call: ${JSON.stringify(allowed)}`);
  const refused = await callFrom(unlisted);
  check(refused.refused, `the unlisted origin's call was readable: ${JSON.stringify(refused)}`);
}, "cors browser run: the listed origin called the API; the unlisted one was refused");
