import { StringDecoder } from 'node:string_decoder';
import { createGzip, type Gzip } from 'node:zlib';
import { nextSlice, sliceDue } from './event-loop-slices';
import { PIECE_CHARACTERS } from './exposition/exposition-text';
import {
  dropsBefore,
  hold,
  keepWithinBudget,
  MAX_READER_LAG_BYTES,
  mebibytes,
  READ_AHEAD_BYTES,
  warnDropped,
  type HeldRendering,
  type SlowestReader,
} from './rendering-memory';

/**
 * The text of one exposition in order, produced lazily (a generator), so it can be rendered in
 * slices. An empty piece hands nothing on but is a point where the rendering may yield: a
 * protobuf family's message is handed on whole, once its length is known.
 */
export type ExpositionPieces = Iterable<string | Buffer>;

/**
 * How much of a rendering is kept for readers who join late. Scrapes that arrive together (several
 * Prometheus servers, a scraper and `metricsText()`) join within the first few milliseconds of
 * a rendering; an exposition smaller than this is kept whole while it renders.
 */
export const JOIN_WINDOW_BYTES = 4 * 1024 * 1024;

/**
 * `text()` decodes this much at a time: a string this large is born in V8's large-object space,
 * which a young-generation collection does not copy (the tens of megabytes of a large exposition,
 * decoded 16 KiB at a time, would be copied by every collection until promoted).
 */
const TEXT_PIECE_BYTES = 512 * 1024;

/** Someone reading a rendering: told when chunks arrive and when it ends. */
export interface RenderingReader {
  /** New chunks are available (read them with `chunkAt`). */
  readonly onChunks: () => void;
  /** The rendering is complete (`error` undefined) or failed. */
  readonly onEnd: (error?: unknown) => void;
  /** How many chunks this reader has taken; the rendering lets go of those every reader has (see `taken`). */
  readonly position: number;
  /**
   * Present on a reader that streams what it takes (an HTTP response): the rendering runs at most
   * a little ahead of its fastest such reader, and calls this to drop one that falls too far
   * behind (see `rendering-memory.ts`); the reader then goes away, and is no longer told anything.
   * A reader without it wants the whole exposition (`bytes()`, `text()`).
   */
  readonly drop?: () => void;
}

/**
 * One rendering of one exposition (one format, one encoding), shared by everyone who asks while
 * it is under way. It runs in slices (see `event-loop-slices.ts`), yielding to the event loop
 * between them. It keeps its first `JOIN_WINDOW_BYTES` of chunks, so a reader who joins late
 * still receives the whole exposition from the start; past them, it lets go of each chunk once
 * every reader has taken it, and takes no new reader (a later scrape starts a rendering of its
 * own, as it does when this one ever had to wait for its readers: see `rendering-memory.ts`). So
 * scrapes that arrive together share one rendering, and a large one holds only what its slowest
 * reader has not taken, not the whole exposition (tens of megabytes at hundreds of replicas,
 * which would also make the garbage collector pause the host). When its last reader
 * leaves before it is done, it stops.
 */
export class SharedRendering implements HeldRendering {
  private readonly chunks: Array<Buffer | undefined> = [];
  /** Where each chunk ends, counted in bytes from the start of the rendering. */
  private readonly ends: number[] = [];
  private produced = 0;
  /** Set while the rendering waits for a streaming reader to take what it rendered. */
  private resume: (() => void) | undefined;
  /** Whether it ever waited for its readers: it then takes no new reader, and keeps no join window. */
  private heldBack = false;
  /** Per streaming reader: the position it had when it last took something, and when that was (`performance.now()`). */
  private readonly took = new Map<RenderingReader, { position: number; at: number }>();
  /** Chunks let go of: every reader has taken them. */
  private released = 0;
  /** Bytes of the chunks not let go of. */
  private heldBytes = 0;
  private readonly readers = new Set<RenderingReader>();
  /** Text not yet encoded: small pieces are gathered into one chunk, a large piece becomes a chunk of its own. */
  private pending = '';
  private state: 'running' | 'done' | 'failed' | 'abandoned' = 'running';
  private failure: unknown;
  private whole: Promise<Buffer> | undefined;
  private wholeHolds = 0;
  private readonly gzip: Gzip | undefined;

  constructor(
    pieces: Promise<ExpositionPieces>,
    compress: boolean,
    private readonly finished: (rendering: SharedRendering) => void,
  ) {
    this.gzip = compress ? createGzip() : undefined;
    this.gzip?.on('data', (chunk: Buffer) => this.publish(chunk));
    this.gzip?.on('error', (error: unknown) => this.end('failed', error));
    void this.run(pieces);
  }

  /**
   * Whether a new reader may still join: it is under way, still holds its first chunk, and never
   * waited for its readers (a rendering held back by readers that stopped reading would serve a
   * newcomer values from before it arrived).
   */
  get joinable(): boolean {
    return this.state === 'running' && this.released === 0 && !this.heldBack;
  }

  get heldForReaders(): number {
    if (!this.streamed()) return 0;
    // A reader of the whole exposition keeps every chunk for itself: only the streaming readers' lag is theirs.
    if (this.wholeHolds === 0) return this.heldBytes;
    let lag = 0;
    for (const reader of this.readers) if (reader.drop !== undefined) lag = Math.max(lag, this.lagOf(reader));
    return lag;
  }

  get slowest(): SlowestReader | undefined {
    return this.slowestReader()?.[1];
  }

  dropSlowest(): void {
    const slowest = this.slowestReader();
    if (slowest !== undefined) this.dropReader(slowest[0]);
  }

  /** How many chunks exist so far. */
  get chunkCount(): number {
    return this.chunks.length;
  }

  chunkAt(index: number): Buffer {
    const chunk = this.chunks[index];
    if (chunk === undefined) throw new RangeError(`chunk ${index} was let go of (every reader had taken it)`);
    return chunk;
  }

  /** A reader took chunks: past the join window, lets go of those every reader has taken. */
  taken(): void {
    const now = performance.now();
    for (const [reader, took] of this.took) {
      if (reader.position === took.position) continue;
      took.position = reader.position;
      took.at = now;
    }
    if (this.resume !== undefined && !this.outrunsReaders()) this.resume();
    if (this.released === 0 && this.heldBytes < JOIN_WINDOW_BYTES && !this.heldBack) return;
    let position = this.chunks.length;
    for (const reader of this.readers) position = Math.min(position, reader.position);
    for (; this.released < position; this.released++) {
      this.heldBytes -= (this.chunks[this.released] as Buffer).length;
      this.chunks[this.released] = undefined;
    }
  }

  /** Starts telling `reader` about chunks (those already there at once, on the next tick) and the end. */
  join(reader: RenderingReader): void {
    if (this.state === 'done' || this.state === 'failed') {
      process.nextTick(() => {
        if (this.chunks.length > 0) reader.onChunks();
        reader.onEnd(this.state === 'failed' ? this.failure : undefined);
      });
      return;
    }
    this.readers.add(reader);
    if (reader.drop !== undefined) {
      this.took.set(reader, { position: reader.position, at: performance.now() });
      hold(this, true);
    } else this.resume?.();
    if (this.chunks.length > 0) process.nextTick(() => this.readers.has(reader) && reader.onChunks());
  }

  /** Stops telling `reader`; the last reader to leave an unfinished rendering stops it. */
  leave(reader: RenderingReader): void {
    if (!this.readers.delete(reader)) return;
    this.took.delete(reader);
    if (!this.streamed()) hold(this, false);
    this.taken();
    if (this.readers.size === 0 && this.wholeHolds === 0 && this.state === 'running') {
      this.state = 'abandoned';
      this.resume?.();
      this.gzip?.destroy();
      this.finished(this);
    }
  }

  /** The whole exposition as one buffer once the rendering is done; every caller gets the same object. */
  bytes(): Promise<Buffer> {
    if (this.whole === undefined) {
      this.wholeHolds++;
      this.whole = new Promise<Buffer>((resolve, reject) => {
        const reader: RenderingReader = {
          // Takes nothing until the end, so every chunk stays for the whole buffer.
          position: 0,
          onChunks: () => undefined,
          onEnd: (error) => {
            this.wholeHolds--;
            this.readers.delete(reader);
            if (error === undefined) resolve(this.chunks.length === 1 ? this.chunkAt(0) : Buffer.concat(this.chunks.map((_, i) => this.chunkAt(i))));
            else reject(error);
          },
        };
        this.join(reader);
      });
    }
    return this.whole;
  }

  /**
   * The whole exposition as a string (of an unzipped rendering), decoded chunk by chunk as the
   * rendering produces them, so within its slices: tens of megabytes decoded at once, or gathered
   * into one buffer first, would hold the event loop for tens of milliseconds. The string is built
   * by concatenation, which V8 keeps as a tree of the chunks' strings until it is first read flat.
   */
  text(): Promise<string> {
    return new Promise((resolve, reject) => {
      const decoder = new StringDecoder('utf8');
      let text = '';
      let gathered: Buffer[] = [];
      let gatheredBytes = 0;
      const decode = (): void => {
        if (gatheredBytes === 0) return;
        text += decoder.write(gathered.length === 1 ? (gathered[0] as Buffer) : Buffer.concat(gathered, gatheredBytes));
        gathered = [];
        gatheredBytes = 0;
      };
      const reader: RenderingReader & { position: number } = {
        position: 0,
        onChunks: () => {
          while (reader.position < this.chunks.length) {
            const chunk = this.chunkAt(reader.position++);
            gathered.push(chunk);
            gatheredBytes += chunk.length;
            if (gatheredBytes >= TEXT_PIECE_BYTES) decode();
          }
          this.taken();
        },
        onEnd: (error) => {
          this.leave(reader);
          decode();
          if (error !== undefined) reject(error);
          else resolve(text + decoder.end());
        },
      };
      this.join(reader);
    });
  }

  private async run(source: Promise<ExpositionPieces>): Promise<void> {
    try {
      const pieces = (await source)[Symbol.iterator]();
      for (;;) {
        if (this.state !== 'running') return;
        const next = pieces.next();
        if (next.done === true) break;
        const piece = next.value;
        if (typeof piece === 'string') {
          this.pending += piece;
          if (this.pending.length >= PIECE_CHARACTERS) await this.flush();
        } else {
          await this.flush();
          await this.emit(piece);
        }
        if (sliceDue()) await nextSlice();
        if (this.outrunsReaders()) await this.readersTake();
      }
      await this.flush();
      if (this.gzip !== undefined) await endGzip(this.gzip);
      this.end('done');
    } catch (error) {
      this.end('failed', error);
    }
  }

  /** Settles the rendering once (a gzip error and the loop's own may both report): tells every reader. */
  private end(state: 'done' | 'failed', error?: unknown): void {
    if (this.state !== 'running') return;
    this.state = state;
    this.failure = error;
    if (state === 'failed') this.gzip?.destroy();
    this.finished(this);
    // Readers stay until they leave: one still writing what it has not taken keeps those chunks.
    for (const reader of [...this.readers]) reader.onEnd(error);
  }

  /** Encodes the text gathered since the last flush and hands it on. */
  private async flush(): Promise<void> {
    if (this.pending === '') return;
    const chunk = Buffer.from(this.pending, 'utf8');
    this.pending = '';
    await this.emit(chunk);
  }

  /** Hands a chunk on: to the readers, or through gzip first (respecting its backpressure). */
  private async emit(chunk: Buffer): Promise<void> {
    if (chunk.length === 0) return;
    if (this.gzip === undefined) this.publish(chunk);
    else if (!this.gzip.write(chunk)) await new Promise<void>((resolve) => this.gzip?.once('drain', resolve));
  }

  private publish(chunk: Buffer): void {
    if (this.state === 'abandoned') return;
    this.chunks.push(chunk);
    this.produced += chunk.length;
    this.ends.push(this.produced);
    this.heldBytes += chunk.length;
    for (const reader of this.readers) reader.onChunks();
    for (const reader of [...this.readers]) {
      if (reader.drop === undefined || this.lagOf(reader) <= MAX_READER_LAG_BYTES) continue;
      warnDropped(this.lagOf(reader), `a reader may be at most ${mebibytes(MAX_READER_LAG_BYTES)} behind`);
      this.dropReader(reader);
    }
    keepWithinBudget();
  }

  /** The streaming reader that has taken nothing for the longest (of two, the one further behind). */
  private slowestReader(): [RenderingReader, SlowestReader] | undefined {
    let slowest: [RenderingReader, SlowestReader] | undefined;
    for (const [reader, took] of this.took) {
      const candidate = { lag: this.lagOf(reader), tookAt: took.at };
      if (slowest === undefined || dropsBefore(candidate, slowest[1])) slowest = [reader, candidate];
    }
    return slowest;
  }

  /** Bytes rendered that `reader` has not taken. */
  private lagOf(reader: RenderingReader): number {
    return reader.position === 0 ? this.produced : this.produced - (this.ends[reader.position - 1] as number);
  }

  /** Whether some reader streams what it takes. */
  private streamed(): boolean {
    for (const reader of this.readers) if (reader.drop !== undefined) return true;
    return false;
  }

  /**
   * Whether the rendering should wait for its readers: every reader streams, and even the one
   * furthest ahead has `READ_AHEAD_BYTES` or more left to take.
   */
  private outrunsReaders(): boolean {
    if (this.wholeHolds > 0 || this.readers.size === 0) return false;
    for (const reader of this.readers) if (reader.drop === undefined || this.lagOf(reader) < READ_AHEAD_BYTES) return false;
    return true;
  }

  /** Resolves once a reader took enough, or left, or a reader of the whole exposition joined. */
  private readersTake(): Promise<void> {
    this.heldBack = true;
    return new Promise((resolve) => {
      this.resume = () => {
        this.resume = undefined;
        resolve();
      };
    });
  }

  private dropReader(reader: RenderingReader): void {
    this.leave(reader);
    reader.drop?.();
  }
}

function endGzip(gzip: Gzip): Promise<void> {
  return new Promise((resolve, reject) => {
    // 'end' fires once the compressed output has been read (the 'data' listener reads it); 'close' once it was destroyed.
    gzip.once('end', resolve);
    gzip.once('close', resolve);
    gzip.once('error', reject);
    gzip.end();
  });
}

/** What a rendering is made from: the exposition in one format, as lazily produced pieces. */
export type RenderExposition<F extends string> = (format: F) => Promise<ExpositionPieces>;

/**
 * The one place where scrapes share work: at most one rendering per format and encoding is under
 * way, and whoever asks for the same while it runs joins it. A request that arrives after a
 * rendering finished starts a new one: there is no reuse window, so every scrape sees values at
 * least as new as its own arrival, as Prometheus expects of a target (two servers scraping one
 * target at different moments get different samples, never one cached copy).
 */
export class SharedRenderings<F extends string> {
  private readonly running = new Map<string, SharedRendering>();
  private startedCount = 0;

  constructor(private readonly render: RenderExposition<F>) {}

  /** Renderings started so far (scrapes that joined one are not counted). */
  get started(): number {
    return this.startedCount;
  }

  /** The rendering of `format` under way, joined, or a new one. */
  rendering(format: F, gzip: boolean): SharedRendering {
    const key = gzip ? `${format}+gzip` : format;
    const current = this.running.get(key);
    if (current !== undefined && current.joinable) return current;
    this.startedCount++;
    const rendering = new SharedRendering(this.render(format), gzip, (finished) => {
      if (this.running.get(key) === finished) this.running.delete(key);
    });
    this.running.set(key, rendering);
    return rendering;
  }
}
