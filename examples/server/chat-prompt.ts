/** A chat message reduced to what the simulated model reads. */
export interface ChatMessage {
  readonly role: string;
  readonly content: string;
}

/** Qwen3-Omni's default system prompt: shared by every request, so its blocks are prefix-cache hits. */
export const DEFAULT_SYSTEM_PROMPT =
  'You are Qwen, a virtual human developed by the Qwen Team, Alibaba Group, capable of perceiving ' +
  'auditory and visual inputs, as well as generating text and speech.';

/** ChatML, as Qwen's chat template renders it, ending with the assistant turn the model completes. */
export function renderChatPrompt(messages: readonly ChatMessage[]): string {
  const withSystem = messages.some((m) => m.role === 'system') ? messages : [{ role: 'system', content: DEFAULT_SYSTEM_PROMPT }, ...messages];
  const turns = withSystem.map((m) => `<|im_start|>${m.role}\n${m.content}<|im_end|>\n`);
  return `${turns.join('')}<|im_start|>assistant\n`;
}
