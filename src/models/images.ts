/**
 * What providers make of images: which models take them, and what one costs in prompt tokens.
 * A rule by model name, since no provider's API says whether a model sees (a model that does not
 * is sent a text note instead: see the `vision` layer, whose `images` option overrides the rule).
 */

/** Model names (without the provider) that take images, by prefix. */
const SEEING_OPENAI = /^(gpt-4o|gpt-4\.1|gpt-4-turbo|gpt-5|o1|o3|o4|chatgpt-4o)/;
const SEEING_OLLAMA = /^(llava|bakllava|llama3\.2-vision|llama4|gemma3|qwen2\.5vl|qwen2-vl|qwen3-vl|minicpm-v|moondream|granite3\.2-vision|mistral-small3\.1)/;

/** Whether a model takes images: OpenAI's vision families, Ollama's vision models, and the scripted doubles (which look). */
export function acceptsImages(modelId: string): boolean {
  const [provider, ...rest] = modelId.split(':');
  const name = rest.join(':');
  if (provider === 'openai') return SEEING_OPENAI.test(name);
  if (provider === 'ollama') return SEEING_OLLAMA.test(name);
  return provider === 'scripted';
}

/** OpenAI's base cost of an image, and its cost per 512-px tile at `detail: 'high'` (gpt-4o, gpt-4.1, gpt-5). */
const OPENAI_BASE = 85;
const OPENAI_PER_TILE = 170;
/**
 * Ollama and other providers: no published formula. LLaVA-style models encode an image at
 * 336×336 in 14-px patches, 24 × 24 = 576 tokens, whatever its size: the figure used here.
 */
export const FIXED_IMAGE_TOKENS = 576;

/**
 * OpenAI's documented tile formula: `low` costs the base alone; `high` fits the image within
 * 2048×2048, shrinks it so its short side is at most 768, and adds a cost per 512-px tile.
 * (Images are only ever scaled down.) 1280×720 at `high`: 3 × 2 tiles, 85 + 6 × 170 = 1105.
 */
export function openAIImageTokens(width: number, height: number, detail: 'low' | 'high'): number {
  if (detail === 'low') return OPENAI_BASE;
  const fit = Math.min(1, 2048 / Math.max(width, height));
  const scale = fit * Math.min(1, 768 / (Math.min(width, height) * fit));
  const tiles = Math.ceil((width * scale) / 512) * Math.ceil((height * scale) / 512);
  return OPENAI_BASE + OPENAI_PER_TILE * tiles;
}

/** The prompt tokens an image costs this model: OpenAI's formula for openai:, the fixed estimate for every other provider. */
export function imageTokens(modelId: string, width: number, height: number, detail: 'low' | 'high'): number {
  return modelId.startsWith('openai:') ? openAIImageTokens(width, height, detail) : FIXED_IMAGE_TOKENS;
}
