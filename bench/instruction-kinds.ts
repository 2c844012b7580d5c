import { readFileSync } from 'node:fs';

/**
 * A process's instructions by what ran them: V8's garbage collector, V8's compilers (parsing,
 * bytecode, the optimizing tiers), and the rest, the program itself (its compiled code, the
 * builtins and runtime functions it calls). A window of requests in a steady process holds a
 * major collection or not depending on where the heap crosses its limit, and one collection is
 * worth hundreds of requests' instructions: split out, the program's own count no longer moves
 * with where the window falls.
 */
export interface InstructionKinds {
  readonly total: number;
  readonly collector: number;
  readonly compiler: number;
  /** total − collector − compiler. */
  readonly program: number;
}

/** V8's compilers and parsers (with `--predictable` they run on the main thread). */
const COMPILER =
  /v8::internal::(compiler|maglev|interpreter|baseline|wasm)::|v8::internal::(Parser|PreParser|Scanner|Ast|Compiler|OptimizingCompileDispatcher|BytecodeArray|Scope|DeclarationScope)/;
/**
 * V8's collector: the heap, its spaces, marking, scavenging, sweeping, evacuation, the remembered
 * sets, and the visitors they walk objects with (named anywhere in a function's name, template
 * arguments included: a body iteration is the collector's when its visitor is).
 */
const COLLECTOR =
  /v8::internal::(Heap::|Heap[A-Z]|[A-Za-z]*Collector|[A-Za-z]*Scaveng|[A-Za-z]*Sweep|[A-Za-z]*Marking|Mark[A-Z]|[A-Za-z]*Evacuat|RememberedSet|SlotSet|TypedSlot|MemoryAllocator|[A-Za-z]*Space::|SemiSpace|GCTracer|MemoryChunk|LargePage|Page::|ObjectStats|PretenuringHandler|MemoryReducer|LocalHeap|WeakObjects|Ephemeron|LiveObject|RecordMigratedSlot|FreeList|WriteBarrier::Marking|[A-Za-z]*Compactor)|IterateObjectCache|heap::base::|cppgc::/;

/** Reads a cachegrind out file (events `Ir` only) and sums its counts by kind of function. */
export function instructionKinds(cachegrindOut: string): InstructionKinds {
  let total = 0;
  let collector = 0;
  let compiler = 0;
  let kind: 'collector' | 'compiler' | 'program' = 'program';
  for (const line of readFileSync(cachegrindOut, 'utf8').split('\n')) {
    if (line.startsWith('fn=')) {
      const name = line.slice(3);
      kind = COMPILER.test(name) ? 'compiler' : COLLECTOR.test(name) ? 'collector' : 'program';
      continue;
    }
    const match = /^\d+ (\d+)$/.exec(line);
    if (match === null) continue;
    const count = Number(match[1]);
    total += count;
    if (kind === 'collector') collector += count;
    else if (kind === 'compiler') compiler += count;
  }
  return { total, collector, compiler, program: total - collector - compiler };
}
