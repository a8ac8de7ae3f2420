import { z } from 'zod';
import { defineLayer } from '../harness/layer.ts';
import { acceptsImages, imageTokens } from '../models/images.ts';
import type { ChatImage } from '../core/model.ts';
import { TEXT_LIMIT } from '../tools/browser.ts';
import { markdownTextTool } from '../tools/markdown.ts';
import { ScreenshotStore, screenshotTools, type Screenshot } from '../tools/screenshot.ts';

export const visionOptions = z
  .object({
    /** How many screenshots the run keeps; a ref older than these answers an error. */
    keep: z.int().min(1).max(50).default(5),
    /** OpenAI's resolution hint: `high` costs 85 + 170 per 512-px tile, `low` 85 (other providers ignore it). */
    detail: z.enum(['low', 'high']).default('high'),
    /** `auto`: images go to models known to take them (see models/images.ts), a text note to the rest; `send` or `note` decide for every model. */
    images: z.enum(['auto', 'send', 'note']).default('auto'),
    /** `markdown` replaces get_text with the page as markdown (tools/markdown.ts); `plain` leaves get_text as it is. */
    text: z.enum(['plain', 'markdown']).default('plain'),
    /** The markdown get_text's cap, in characters, as plain get_text's. */
    textLimit: z.int().positive().default(TEXT_LIMIT),
  })
  .strict();

/** How a screenshot is named in text, where its pixels are not: in the message that carries it, and so in the trace. */
function describeShot({ ref, width, height, bytes }: Screenshot): string {
  return `[image ${ref}, ${width}×${height}, ${Math.round(bytes / 1024)} KB]`;
}

/**
 * Seeing the page: a `screenshot` tool that keeps the image and answers a ref, and
 * `view_screenshot({ ref })`, after which the image goes to the model as the next user message
 * (a model that takes no images gets a note saying so). Only refs, sizes and token estimates
 * reach the trace and the record; `harness_image` records each image sent. With `text: 'markdown'`,
 * get_text answers the page as markdown.
 */
export const vision = defineLayer({
  name: 'vision',
  options: visionOptions,
  create({ keep, detail, images, text, textLimit }) {
    const store = new ScreenshotStore(keep);
    let toShow: Screenshot[] = [];
    const sends = (modelId: string) => images === 'send' || (images === 'auto' && acceptsImages(modelId));

    return {
      tools(run, tools) {
        // A new attempt's conversation starts clean: nothing viewed in the last one is owed to it.
        toShow = [];
        const seeing = screenshotTools(() => run.page, store, (shot) => {
          toShow.push(shot);
          const sent = sends(run.model.id);
          const tokens = sent ? imageTokens(run.model.id, shot.width, shot.height, detail) : 0;
          return { tokens, shown: sent ? 'the image follows as the next message' : `${run.model.id} does not take images: not sent` };
        });
        const offered = text === 'markdown' ? tools.map((tool) => (tool.name === 'get_text' ? markdownTextTool(() => run.page, textLimit) : tool)) : tools;
        return [...offered, ...seeing];
      },
      afterTools(run) {
        // After the turn's tool results, which must follow their assistant message directly.
        const shots = toShow;
        toShow = [];
        if (shots.length === 0) return;
        const named = shots.map(describeShot).join(' ');
        if (!sends(run.model.id)) {
          run.tell('vision', `${named}: ${run.model.id} does not take images, so the screenshot is not shown; use get_text to read the page.`);
          return;
        }
        const attached: ChatImage[] = shots.map((shot) => ({ mimeType: 'image/jpeg', data: shot.jpeg.toString('base64'), detail }));
        run.push({ role: 'user', content: `[harness] ${named}`, images: attached });
        for (const shot of shots) run.record({ type: 'harness_image', ref: shot.ref, width: shot.width, height: shot.height, bytes: shot.bytes, tokens: imageTokens(run.model.id, shot.width, shot.height, detail) });
      },
    };
  },
});
