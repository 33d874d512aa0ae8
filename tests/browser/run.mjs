// What the browser runs share: Debian's chromium, launched as every run launches it, and one way to
// end a run: its failures gathered, the browser closed, a non-zero exit with the reasons.
import { chromium } from "playwright-core";

export const failures = [];
export const check = (ok, what) => { if (!ok) failures.push(what); };

export function launch() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
    args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking", "--disable-component-update"],
  });
}

// Runs `steps`, closes `browser`, then `last` (checks that need every step done); exits 1 with the
// failures, or prints `passed` when there is one.
export async function run(browser, steps, passed, last = () => {}) {
  try {
    await steps();
  } catch (error) {
    failures.push(String(error?.stack ?? error));
  } finally {
    await browser.close();
  }
  last();
  if (failures.length) {
    console.error(failures.join("\n"));
    process.exit(1);
  }
  if (passed) console.log(passed);
}
