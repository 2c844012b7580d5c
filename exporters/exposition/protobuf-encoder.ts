/**
 * The little of the protocol buffers wire format the Prometheus exposition needs: varints (and
 * their zigzag form), doubles, strings and nested messages, written into one growing buffer. A
 * nested message's length is not known until it is written, so one byte is reserved for it and the
 * message is moved up when its length takes more (rare: only messages of 128 bytes and more).
 */

const VARINT = 0;
const FIXED64 = 1;
const LENGTH_DELIMITED = 2;

export class ProtobufEncoder {
  private buffer = Buffer.allocUnsafe(4096);
  private length = 0;
  /** Where each open message's contents begin (after the reserved length byte). */
  private readonly open: number[] = [];

  /** An unsigned integer field (uint32/uint64/enum); integers up to 2^53. */
  uint(field: number, value: number): void {
    this.key(field, VARINT);
    this.varint(value);
  }

  /** A signed integer field in zigzag form (sint32/sint64). */
  sint(field: number, value: number): void {
    this.key(field, VARINT);
    this.varint(value >= 0 ? value * 2 : -value * 2 - 1);
  }

  double(field: number, value: number): void {
    this.key(field, FIXED64);
    this.room(8);
    this.buffer.writeDoubleLE(value, this.length);
    this.length += 8;
  }

  string(field: number, value: string): void {
    this.key(field, LENGTH_DELIMITED);
    const bytes = Buffer.byteLength(value, 'utf8');
    this.varint(bytes);
    this.room(bytes);
    this.buffer.write(value, this.length, 'utf8');
    this.length += bytes;
  }

  /** Starts a nested message in `field`, or (no field) a length-prefixed message of a delimited stream. */
  begin(field?: number): void {
    if (field !== undefined) this.key(field, LENGTH_DELIMITED);
    this.room(1);
    this.length++;
    this.open.push(this.length);
  }

  /** Ends the message `begin` started, writing its length. */
  end(): void {
    const start = this.open.pop() as number;
    const size = this.length - start;
    const lengthBytes = varintSize(size);
    if (lengthBytes > 1) {
      this.room(lengthBytes - 1);
      this.buffer.copyWithin(start + lengthBytes - 1, start, this.length);
      this.length += lengthBytes - 1;
    }
    let at = start - 1;
    let rest = size;
    while (rest >= 0x80) {
      this.buffer[at++] = (rest % 0x80) | 0x80;
      rest = Math.floor(rest / 0x80);
    }
    this.buffer[at] = rest;
  }

  get size(): number {
    return this.length;
  }

  /** The bytes written so far (a copy), and a fresh start. */
  take(): Buffer {
    const bytes = Buffer.from(this.buffer.subarray(0, this.length));
    this.length = 0;
    return bytes;
  }

  private key(field: number, wireType: number): void {
    this.varint(field * 8 + wireType);
  }

  private varint(value: number): void {
    this.room(10);
    let rest = value;
    while (rest >= 0x80) {
      this.buffer[this.length++] = (rest % 0x80) | 0x80;
      rest = Math.floor(rest / 0x80);
    }
    this.buffer[this.length++] = rest;
  }

  private room(bytes: number): void {
    if (this.length + bytes <= this.buffer.length) return;
    let capacity = this.buffer.length * 2;
    while (capacity < this.length + bytes) capacity *= 2;
    const grown = Buffer.allocUnsafe(capacity);
    this.buffer.copy(grown, 0, 0, this.length);
    this.buffer = grown;
  }
}

function varintSize(value: number): number {
  let size = 1;
  let rest = value;
  while (rest >= 0x80) {
    size++;
    rest = Math.floor(rest / 0x80);
  }
  return size;
}
