import type { Page } from '@playwright/test';
import { z } from 'zod';
import { firstMatch } from './browser.ts';
import { defineTool, ToolError, type Tool, type ToolOutput } from './registry.ts';

/** Every screenshot is of this viewport, whatever the context's own: the same page costs the same tokens in every run. */
const SCREENSHOT_VIEWPORT = { width: 1280, height: 720 } as const;
/** JPEG quality: small enough to keep, sharp enough to read a page's 10-px text. */
const JPEG_QUALITY = 60;

/** A screenshot the harness keeps until the model asks to see it. */
export interface Screenshot {
  ref: string;
  width: number;
  height: number;
  bytes: number;
  jpeg: Buffer;
}

/**
 * The run's screenshots by ref (`shot_1`, `shot_2`, …), the last `keep` of them: pixels stay here,
 * only refs reach the model, the trace and the record.
 */
export class ScreenshotStore {
  private readonly shots = new Map<string, Screenshot>();
  private taken = 0;

  constructor(private readonly keep: number) {}

  add(jpeg: Buffer): Screenshot {
    this.taken += 1;
    const shot = { ref: `shot_${this.taken}`, ...jpegSize(jpeg), bytes: jpeg.length, jpeg };
    this.shots.set(shot.ref, shot);
    // A Map keeps insertion order: the first key is the oldest.
    if (this.shots.size > this.keep) this.shots.delete(this.shots.keys().next().value!);
    return shot;
  }

  get(ref: string): Screenshot {
    const shot = this.shots.get(ref);
    if (shot) return shot;
    const kept = [...this.shots.keys()];
    const taken = Number(/^shot_(\d+)$/.exec(ref)?.[1] ?? Infinity) <= this.taken;
    const which = kept.length === 0 ? 'none is kept' : `kept: ${kept.join(', ')}`;
    throw new ToolError(taken ? `${ref} is no longer kept: the harness keeps the last ${this.keep} screenshots (${which}); take a new one` : `no screenshot ${ref} (${which})`);
  }
}

/** A JPEG's width and height, from its first start-of-frame segment (baseline or progressive). */
export function jpegSize(jpeg: Buffer): { width: number; height: number } {
  if (jpeg.readUInt16BE(0) !== 0xffd8) throw new Error('not a JPEG: no start-of-image marker');
  let at = 2;
  while (at + 9 < jpeg.length) {
    const marker = jpeg.readUInt16BE(at);
    // SOF0–SOF15 carry the frame's size, except DHT (C4), JPG (C8) and DAC (CC).
    if (marker >= 0xffc0 && marker <= 0xffcf && ![0xffc4, 0xffc8, 0xffcc].includes(marker)) {
      return { height: jpeg.readUInt16BE(at + 5), width: jpeg.readUInt16BE(at + 7) };
    }
    at += 2 + jpeg.readUInt16BE(at + 2);
  }
  throw new Error('not a JPEG: no start-of-frame segment');
}

/** The page (or one element of it) as a JPEG, at the fixed viewport; the page's own viewport is put back after. */
export async function takeScreenshot(page: Page, selector?: string): Promise<Buffer> {
  const own = page.viewportSize();
  const resize = own?.width !== SCREENSHOT_VIEWPORT.width || own?.height !== SCREENSHOT_VIEWPORT.height;
  if (resize) await page.setViewportSize(SCREENSHOT_VIEWPORT);
  try {
    const options = { type: 'jpeg', quality: JPEG_QUALITY, scale: 'css' } as const;
    if (selector === undefined) return await page.screenshot(options);
    return await (await firstMatch(page, selector)).screenshot(options);
  } finally {
    if (resize && own) await page.setViewportSize(own);
  }
}

/**
 * `screenshot` keeps an image and answers its ref; `view_screenshot` hands a kept one to `show`
 * (the layer sends it to the model as the next user message) and answers its ref with what `show` adds.
 */
export function screenshotTools(page: () => Page, store: ScreenshotStore, show: (shot: Screenshot) => ToolOutput): Tool[] {
  const refOf = ({ ref, width, height, bytes }: Screenshot) => ({ ref, width, height, bytes });
  return [
    defineTool({
      name: 'screenshot',
      effect: 'read',
      description: `Take a screenshot of the page (${SCREENSHOT_VIEWPORT.width}×${SCREENSHOT_VIEWPORT.height}), or of the first element matching a CSS selector. Answers a ref; view_screenshot({ ref }) shows the image.`,
      parameters: z.object({ selector: z.string().min(1).optional() }),
      output: z.object({ ref: z.string(), width: z.number(), height: z.number(), bytes: z.number() }),
      async execute({ selector }) {
        return refOf(store.add(await takeScreenshot(page(), selector)));
      },
    }),
    defineTool({
      name: 'view_screenshot',
      effect: 'read',
      description: 'Show a screenshot taken earlier, by its ref: the image follows as the next message.',
      parameters: z.object({ ref: z.string().min(1) }),
      async execute({ ref }) {
        const shot = store.get(ref);
        return { ...refOf(shot), ...show(shot) };
      },
    }),
  ];
}
