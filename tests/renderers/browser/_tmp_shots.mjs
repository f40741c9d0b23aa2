import { mkdtempSync } from "node:fs"; import { tmpdir } from "node:os"; import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url"; import { chromium } from "playwright-core";
const [rep, outPrefix, w] = process.argv.slice(2);
const ctx = await chromium.launchPersistentContext(mkdtempSync(join(tmpdir(), "x-")), {executablePath: "/usr/bin/chromium", headless: true,
  args: ["--no-sandbox","--disable-gpu","--disable-quic","--no-first-run","--disable-background-networking","--disable-component-update","--disable-sync"], viewport: {width: Number(w||1280), height: 1000}});
const p = ctx.pages()[0]; await p.goto(pathToFileURL(resolve(rep)).href);
const h = await p.evaluate(() => document.documentElement.scrollHeight);
for (let y = 0, i = 0; y < h; y += 1000, i++) await p.screenshot({ path: `${outPrefix}${i}.png`, fullPage: true, clip: {x:0,y, width: Number(w||1280), height: Math.min(1000, h-y)} });
await ctx.close(); console.log(h);
