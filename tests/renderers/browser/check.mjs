// Drives report.html in the machine's headless Chromium (Debian's /usr/bin/chromium,
// installed by scripts/install-debian-packages) with playwright-core (package.json; it
// never downloads a browser). Run by tests/renderers/test_html.py:
//
//   node tests/renderers/browser/check.mjs REPORT.html SCREENSHOT.png EXPECT.json
//
// EXPECT.json (written by the test from the results it rendered):
//   verdict        the verdict badge's text, e.g. "FAIL"
//   findings_rows  rows of the findings table
//   tools_sorted   the tool column after one click on its header (ascending)
//   filter         {"text": ..., "rows": N}: rows left after typing text in the filter box
//   severity       {"value": ..., "rows": N}: rows left after choosing that severity
//   tests_by_violations  test ids after one click on the tests table's "violations" header
//   scenarios      (optional) {"rows": N, "status": ..., "status_rows": N}
//   hits           number of highlighted snippet lines
//
// It fails (exit 1, the reasons on stderr) on any console error, page error, request for
// anything but the file itself (file:) or data:, or an expectation not met; it prints a
// JSON summary on stdout and saves a full-page screenshot.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { chromium } from "playwright-core";

const CHROMIUM = process.env.AGENT_EVAL_CHROMIUM || "/usr/bin/chromium";
const FLAGS = [
  "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
  "--disable-background-networking", "--disable-component-update", "--disable-sync",
];

const [reportArg, screenshotArg, expectArg] = process.argv.slice(2);
if (!reportArg || !screenshotArg || !expectArg) {
  console.error("usage: node check.mjs REPORT.html SCREENSHOT.png EXPECT.json");
  process.exit(2);
}
const expect = JSON.parse(readFileSync(expectArg, "utf8"));
const failures = [];
const problems = [];  // console errors, page errors, foreign requests
const check = (ok, what) => { if (!ok) { failures.push(what); } };
const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

// playwright refuses --user-data-dir in args: a persistent context in a new empty folder
const profile = mkdtempSync(join(tmpdir(), "agent-eval-chromium-"));
const context = await chromium.launchPersistentContext(profile, {
  executablePath: CHROMIUM, headless: true, args: FLAGS,
  viewport: { width: 1280, height: 900 }, timeout: 60_000,
});
const summary = {};
try {
  const page = context.pages()[0] ?? await context.newPage();
  page.on("console", (msg) => {
    if (msg.type() === "error") { problems.push(`console error: ${msg.text()}`); }
  });
  page.on("pageerror", (err) => problems.push(`page error: ${err.message}`));
  page.on("request", (req) => {
    const url = req.url();
    if (!url.startsWith("file:") && !url.startsWith("data:")) {
      problems.push(`request for ${url}`);
    }
  });
  await page.goto(pathToFileURL(resolve(reportArg)).href, { waitUntil: "load" });

  const F = "#findings-table";
  const visible = (table) => page.$$eval(`${table} tbody tr`,
    (rows) => rows.filter((r) => !r.hidden && r.offsetParent !== null).length);
  const column = (table, i) => page.$$eval(`${table} tbody tr`,
    (rows, i) => rows.filter((r) => !r.hidden).map((r) => r.cells[i].textContent.trim()), i);
  const visibleTexts = (table) => page.$$eval(`${table} tbody tr`,
    (rows) => rows.filter((r) => !r.hidden).map((r) => r.textContent.toLowerCase()));

  const verdict = (await page.textContent("#verdict")).trim();
  check(verdict === expect.verdict, `verdict badge "${verdict}", expected "${expect.verdict}"`);
  check(await page.isVisible(`.filters[data-for="findings-table"]`),
    "the findings filter bar is still hidden: the script did not run");

  // ---- sort by clicking a column header
  const rows = await visible(F);
  check(rows === expect.findings_rows, `findings rows ${rows}, expected ${expect.findings_rows}`);
  const before = await column(F, 3);
  const numbersBefore = await column(F, 0);
  await page.click(`${F} thead th:nth-child(4)`);
  const ascending = await column(F, 3);
  check(same(ascending, expect.tools_sorted),
    `after one click on "tool": ${JSON.stringify(ascending)}, expected ${JSON.stringify(expect.tools_sorted)}`);
  check(await page.getAttribute(`${F} thead th:nth-child(4)`, "aria-sort") === "ascending",
    "the tool header is not marked ascending");
  if (!same(before, expect.tools_sorted)) {
    check(!same(await column(F, 0), numbersBefore), "sorting by tool did not move any row");
  }
  await page.click(`${F} thead th:nth-child(4)`);
  const descending = await column(F, 3);
  check(same(descending, [...expect.tools_sorted].reverse()),
    `after a second click on "tool": ${JSON.stringify(descending)}, expected the reverse`);
  check(descending[0] === expect.tools_sorted[expect.tools_sorted.length - 1],
    `first row's tool after the second click is ${descending[0]}`);
  summary.first_tool_ascending = ascending[0];
  summary.first_tool_descending = descending[0];
  await page.click(`${F} thead th:nth-child(1)`);  // back to the report's order
  check(same(await column(F, 0), numbersBefore), "sorting by # did not restore the order");

  const T = "#tests-table";
  await page.click(`${T} thead th:nth-child(5)`);
  const tests = await column(T, 0);
  check(same(tests, expect.tests_by_violations),
    `tests sorted by violations: ${JSON.stringify(tests)}, expected ${JSON.stringify(expect.tests_by_violations)}`);

  // ---- the text filter
  const box = `.filters[data-for="findings-table"] .filter-text`;
  await page.fill(box, expect.filter.text);
  const filtered = await visible(F);
  check(filtered === expect.filter.rows,
    `rows matching "${expect.filter.text}": ${filtered}, expected ${expect.filter.rows}`);
  const needle = expect.filter.text.toLowerCase();
  check((await visibleTexts(F)).every((t) => t.includes(needle)),
    `a visible row does not contain "${expect.filter.text}"`);
  const countText = (await page.textContent(`.filters[data-for="findings-table"] .count`)).trim();
  check(countText === `${expect.filter.rows} of ${expect.findings_rows} rows shown`,
    `count label "${countText}"`);
  summary.filter_rows = filtered;
  await page.fill(box, "");
  check(await visible(F) === expect.findings_rows, "clearing the filter did not show all rows");

  // ---- the severity select
  const select = `.filters[data-for="findings-table"] .filter-cat`;
  await page.selectOption(select, expect.severity.value);
  const bySeverity = await visible(F);
  check(bySeverity === expect.severity.rows,
    `rows with severity ${expect.severity.value}: ${bySeverity}, expected ${expect.severity.rows}`);
  const cats = await page.$$eval(`${F} tbody tr`,
    (rs) => rs.filter((r) => !r.hidden).map((r) => r.getAttribute("data-cat")));
  check(cats.every((c) => c === expect.severity.value), `other severities visible: ${cats}`);
  summary.severity_rows = bySeverity;
  // both filters at once: severity and text
  await page.fill(box, "zz-no-such-text-zz");
  check(await visible(F) === 0, "a filter matching nothing left rows visible");
  await page.fill(box, "");
  await page.selectOption(select, "");
  check(await visible(F) === expect.findings_rows, "choosing all severities did not show all rows");

  if (expect.scenarios) {
    const S = "#scenarios-table";
    check(await visible(S) === expect.scenarios.rows, "scenario rows");
    await page.selectOption(`.filters[data-for="scenarios-table"] .filter-cat`,
      expect.scenarios.status);
    const n = await visible(S);
    check(n === expect.scenarios.status_rows,
      `scenarios with status ${expect.scenarios.status}: ${n}, expected ${expect.scenarios.status_rows}`);
    await page.selectOption(`.filters[data-for="scenarios-table"] .filter-cat`, "");
  } else {
    check(await page.$("#scenarios-table") === null, "a scenarios table without scenarios");
  }

  const hits = await page.$$eval(".snippet .line.hit", (els) => els.length);
  check(hits === expect.hits, `highlighted snippet lines ${hits}, expected ${expect.hits}`);

  await page.click(`${F} thead th:nth-child(4)`);  // the screenshot shows a sorted table
  await page.screenshot({ path: screenshotArg, fullPage: true });
  summary.screenshot = screenshotArg;
} finally {
  await context.close();
  rmSync(profile, { recursive: true, force: true });
}

const all = [...problems, ...failures];
summary.problems = problems;
summary.failures = failures;
console.log(JSON.stringify(summary));
if (all.length) {
  for (const line of all) { console.error(`FAIL: ${line}`); }
  process.exit(1);
}
