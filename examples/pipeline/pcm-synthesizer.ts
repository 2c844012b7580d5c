import type { SeededRandom } from './seeded-random';

/** Quiet on purpose: about -26 dBFS, so a demo never blasts anyone's speakers. */
const AMPLITUDE = 1600;
const NOISE_AMPLITUDE = 120;

/**
 * Turns codec frames into PCM16 mono samples: each codec id picks a pitch, phase runs on across
 * frames and chunks (no clicks), and a little seeded noise is mixed in. Real samples, fake speech.
 */
export class PcmSynthesizer {
  private phase = 0;

  constructor(
    private readonly sampleRate: number,
    private readonly samplesPerFrame: number,
    private readonly random: SeededRandom,
  ) {}

  synthesize(codecIds: readonly number[]): Int16Array {
    const samples = new Int16Array(codecIds.length * this.samplesPerFrame);
    let offset = 0;
    for (const id of codecIds) {
      const frequency = 110 + (Math.abs(id) % 48) * 5;
      const step = (2 * Math.PI * frequency) / this.sampleRate;
      for (let i = 0; i < this.samplesPerFrame; i++) {
        const noise = (this.random.next() * 2 - 1) * NOISE_AMPLITUDE;
        samples[offset++] = Math.round(Math.sin(this.phase) * AMPLITUDE + noise);
        this.phase += step;
      }
      this.phase %= 2 * Math.PI;
    }
    return samples;
  }
}
