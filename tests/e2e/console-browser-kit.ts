import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

/** Debian's Chromium unless CHROMIUM_PATH names another. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Deadlines for the page: generous, as Chromium and ten services share a 2-core machine with other test runs. */
export const WAIT = { timeout: 30_000 };

export interface ConsoleBrowser {
  browser: BrowserContext;
  page: Page;
  close(): Promise<void>;
}

/** A headless Chromium on a fresh profile (no cached page, key or cookie of an earlier run). */
export async function openBrowser(): Promise<ConsoleBrowser> {
  const profile = mkdtempSync(join(tmpdir(), 'hermes-console-'));
  const browser = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    viewport: { width: 1280, height: 900 },
  });
  const page = browser.pages()[0] ?? (await browser.newPage());
  return {
    browser,
    page,
    close: async () => {
      await browser.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** Logs in to the console at `gatewayUrl` with an API key and waits for the task list. */
export async function logIn(page: Page, gatewayUrl: string, key: string): Promise<void> {
  await page.goto(`${gatewayUrl}/console/`);
  await page.fill('#api-key', key);
  await page.click('#login button[type=submit]');
  await page.waitForSelector('#task-rows', { state: 'attached', ...WAIT });
}
