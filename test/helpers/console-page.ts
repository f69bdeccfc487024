import type { BrowserContext, Locator, Page } from 'playwright-core';

/** How long a browser test waits for the page to show something: a bound, not a timing claim. */
export const WAIT = { timeout: 15_000 };

/** Waits (bounded) until the element shows the text. */
export function shows(locator: Locator, text: string | RegExp): Promise<void> {
  return locator.filter({ hasText: text }).first().waitFor(WAIT);
}

/** A new page of `context` logged in to the console at `operatorUrl` through its login form. */
export async function logIn(
  context: BrowserContext,
  operatorUrl: string,
  name: string,
  credential: string,
): Promise<Page> {
  const page = await context.newPage();
  await page.goto(`${operatorUrl}/console`);
  await page.getByLabel('Operator name').fill(name);
  await page.getByLabel('Credential').fill(credential);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.getByRole('button', { name: 'Log out' }).waitFor(WAIT);
  return page;
}
