import { hashString } from './seeded-random';

/**
 * The simulated model's tokenizer. Prompts are split into words and punctuation and hashed into a
 * 32k id space, so the same text always yields the same ids (which is what prefix caching keys on).
 * Generated ids are indices into a small speech-like vocabulary, so decoded output reads as words.
 */
const VOCABULARY: readonly string[] = Object.freeze(
  (
    'the a of to and in is that it for on with as this be are was at by from or an can we you ' +
    'will sound voice model audio speech stage talker thinker signal latency token stream reply ' +
    'question answer clear quiet gentle warm short long sentence word pipeline replica cache ' +
    'request frame wave music listen speak hear time second minute fast slow steady simple ' +
    'today here there again also just very well good more less first next last every each ' +
    'about around through between after before while because so then now still really ' +
    'weather city river morning evening light sky story idea plan team work help thanks'
  ).split(' '),
);

/** Ids of `.` and `,` sit after the words; generated text ends sentences with them. */
const PERIOD_ID = VOCABULARY.length;
const COMMA_ID = VOCABULARY.length + 1;

const PROMPT_ID_BASE = 1000;
const PROMPT_ID_SPACE = 30000;
const PIECE = /[\p{L}\p{N}_]+|[^\s\p{L}\p{N}_]/gu;

export class ToyTokenizer {
  /** Prompt text → ids; identical text gives identical ids. */
  encode(text: string): number[] {
    const pieces = text.match(PIECE) ?? [];
    return pieces.map((piece) => PROMPT_ID_BASE + (hashString(piece.toLowerCase()) % PROMPT_ID_SPACE));
  }

  /**
   * Generated ids → text. `continuation` is true when text precedes these ids, so the first word
   * gets its separating space (detokenizing deltas one step at a time must equal the whole text).
   */
  decode(ids: readonly number[], continuation = false): string {
    let text = '';
    let first = !continuation;
    for (const id of ids) {
      if (id === PERIOD_ID) text += '.';
      else if (id === COMMA_ID) text += ',';
      else {
        text += (first ? '' : ' ') + VOCABULARY[Math.abs(id) % VOCABULARY.length];
      }
      first = false;
    }
    return text;
  }

  /**
   * Id a simulated thinker emits next, given a uniform draw `u` in [0, 1) and what it emitted so far:
   * a sentence end about every ~12 words and a comma about every ~8, never two marks in a row.
   */
  sampleOutputId(u: number, previousIds: readonly number[]): number {
    const previous = previousIds[previousIds.length - 1];
    const afterWord = previous !== undefined && previous !== PERIOD_ID && previous !== COMMA_ID;
    if (afterWord && u < 0.08) return PERIOD_ID;
    if (afterWord && u < 0.2) return COMMA_ID;
    return Math.floor(u * VOCABULARY.length);
  }
}
