/**
 * Debian's Chromium, driven by playwright-core, as every browser test starts it. The flags keep it
 * from reaching out at start (this machine's network is closed) and from needing a display.
 */
import { existsSync } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const LAUNCH_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
  '--disable-component-update', '--disable-sync', '--no-first-run'];

/** A test's `skip` option: false where Chromium is installed, else the line saying why it is skipped. */
export const skipWithoutChromium: false | string = existsSync(CHROMIUM) ? false : `no Chromium at ${CHROMIUM}`;

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: LAUNCH_ARGS });
}
