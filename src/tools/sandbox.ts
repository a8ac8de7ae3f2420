import { DEFAULT_TOOL_TIMEOUT_MS, race, TIMED_OUT } from '../harness/limits.ts';
import type {
  QuickJSContext,
  QuickJSDeferredPromise,
  QuickJSHandle,
  QuickJSRuntime,
} from 'quickjs-emscripten';

/**
 * A sandbox for programs a model writes: QuickJS compiled to WebAssembly, a fresh module per
 * program. The program has the language and nothing else (no process, require, fetch, import,
 * timers or file system: QuickJS has none) besides the functions it is given, which answer
 * promises and reach the host only as JSON. Memory, stack and time are capped.
 *
 * Each module gets a fixed-size WebAssembly memory: `setMemoryLimit` alone bounds the object heap
 * but not large strings, arrays or buffers (justjake/quickjs-emscripten#271), which would grow the
 * host's memory to 2 GB; with no room to grow, they fail as QuickJS's "out of memory".
 *
 * Not the asyncify build: an asyncified host function called after the program's first `await`
 * runs inside the synchronous job queue and corrupts the module, and programs are async
 * functions. Host functions answer promises instead, and the host drives the job queue.
 */

/** A function a program may call: its arguments and answer cross as JSON; a throw becomes the program's exception. */
export type HostFunction = (...args: unknown[]) => Promise<unknown>;

/** The names a program sees: functions, and namespaces of them (`browser.click`). */
export interface Dsl {
  readonly [name: string]: HostFunction | Dsl;
}

export interface ProgramLimits {
  timeoutMs: number;
  memoryBytes: number;
  /** The most one host call may take (default 30 s): past it the program sees it fail, and closing the program no longer waits for it. */
  hostCallMs?: number;
}

export type ProgramResult = { ok: true; value: unknown; log: string[] } | { ok: false; error: string; log: string[] };

/** What the module itself needs (code data, C stack) below the program's memory: its declared minimum. */
const MODULE_BASE_BYTES = 16 * 1024 * 1024;
const WASM_PAGE_BYTES = 64 * 1024;
/** QuickJS's stack limit, below the host's own: deeper recursion overflows Node's stack inside the module and leaves it corrupt. */
const STACK_BYTES = 256 * 1024;
/** A host answer may use at most this fraction of the program's memory (its text, its string, its parsed value). */
const ANSWER_SHARE = 8;
/** The log lives on the host, outside the memory limit, so it is capped here. */
const LOG_LINES = 100;
const LOG_LINE_CHARS = 1000;

/**
 * Runs `source` as the body of an async function (top-level `await` and `return` work) with the
 * `dsl` functions and `log(...)` as its only globals besides the language's own. Never throws for
 * anything the program does: exceptions, time-outs and running out of memory are results.
 */
export async function runProgram(source: string, dsl: Dsl, limits: ProgramLimits): Promise<ProgramResult> {
  const pages = Math.ceil((MODULE_BASE_BYTES + limits.memoryBytes) / WASM_PAGE_BYTES);
  const wasmMemory = new WebAssembly.Memory({ initial: pages, maximum: pages });
  // Loaded when code mode first runs a program: a worker that never does never imports it.
  const { newQuickJSWASMModuleFromVariant, newVariant, RELEASE_SYNC, shouldInterruptAfterDeadline } = await import('quickjs-emscripten');
  const quickjs = await newQuickJSWASMModuleFromVariant(newVariant(RELEASE_SYNC, { wasmMemory }));
  const runtime = quickjs.newRuntime();
  const vm = runtime.newContext();
  const program = new Program(runtime, vm, limits, shouldInterruptAfterDeadline);
  let result: ProgramResult;
  try {
    result = await program.run(source, dsl);
    await program.close();
  } catch (error) {
    // The module traps when the program has used up its memory under a host allocation.
    program.exhausted = true;
    result = { ok: false, error: `the sandbox crashed: ${error instanceof Error ? error.message : String(error)}`, log: program.log };
    await program.close().catch(() => {});
  }
  try {
    vm.dispose();
    runtime.dispose();
  } catch (error) {
    // A module whose memory ran out may be past cleaning up: it is this program's alone and is
    // dropped whole. Anywhere else a failed disposal is a leak, a bug to hear about.
    if (!program.exhausted) throw error;
  }
  return result;
}

class Program {
  readonly log: string[] = [];
  private readonly deadline: number;
  /** Host calls still running, each with the guest promise it will settle. */
  private readonly inFlight = new Map<Promise<void>, QuickJSDeferredPromise>();
  private jsonParse?: QuickJSHandle;
  /** Set when a host answer could not be handed to the program (no memory left for it). */
  private fault?: string;
  private wake = () => {};
  private closed = false;
  /** The program ran out of memory or crashed the module: its state may be corrupt. */
  exhausted = false;

  constructor(
    private readonly runtime: QuickJSRuntime,
    private readonly vm: QuickJSContext,
    private readonly limits: ProgramLimits,
    interruptAfter: typeof import('quickjs-emscripten').shouldInterruptAfterDeadline,
  ) {
    this.deadline = Date.now() + limits.timeoutMs;
    runtime.setMemoryLimit(limits.memoryBytes);
    runtime.setMaxStackSize(STACK_BYTES);
    runtime.setInterruptHandler(interruptAfter(this.deadline));
  }

  async run(source: string, dsl: Dsl): Promise<ProgramResult> {
    const { vm } = this;
    this.jsonParse = vm.getProp(vm.global, 'JSON').consume((json) => vm.getProp(json, 'parse'));
    this.install(vm.global, dsl);
    vm.newFunction('log', (...args) => this.record(args.map((arg) => this.format(arg)).join(' '))).consume((log) => {
      vm.setProp(vm.global, 'log', log);
      // Models write console.log out of habit.
      vm.newObject().consume((console) => {
        vm.setProp(console, 'log', log);
        vm.setProp(vm.global, 'console', console);
      });
    });

    const evaluated = vm.evalCode(`(async function () {\n${source}\n})()`, 'program.js');
    if (evaluated.error) return this.failure(this.message(evaluated.error));
    const promise = evaluated.value;
    try {
      for (;;) {
        const jobs = this.runtime.executePendingJobs();
        if (jobs.error) return this.failure(this.message(jobs.error));
        if (this.fault) return this.failure(this.fault);
        const state = vm.getPromiseState(promise);
        if (state.type === 'fulfilled') return { ok: true, value: state.value.consume((value) => vm.dump(value)), log: this.log };
        if (state.type === 'rejected') return this.failure(this.message(state.error));
        if (this.inFlight.size === 0) return this.failure('the program awaits a promise that nothing will settle');
        if (!(await this.nextSettlement())) return this.timedOut();
      }
    } finally {
      promise.dispose();
    }
  }

  /** Stops the program for good: host calls still running are waited for (each ends within its limit, so none outlives its program), their answers dropped. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.inFlight.keys());
    for (const deferred of this.inFlight.values()) deferred.dispose();
    this.inFlight.clear();
    this.jsonParse?.dispose();
  }

  private install(target: QuickJSHandle, dsl: Dsl): void {
    for (const [name, member] of Object.entries(dsl)) {
      if (typeof member === 'function') {
        this.vm.newFunction(name, (...args) => this.callHost(member, args.map((arg) => this.vm.dump(arg)))).consume((fn) => this.vm.setProp(target, name, fn));
      } else {
        this.vm.newObject().consume((namespace) => {
          this.install(namespace, member);
          this.vm.setProp(target, name, namespace);
        });
      }
    }
  }

  /** Starts a host call and answers the program a promise that settles when it does. */
  private callHost(fn: HostFunction, args: unknown[]): QuickJSHandle {
    const deferred = this.vm.newPromise();
    const limit = this.limits.hostCallMs ?? DEFAULT_TOOL_TIMEOUT_MS;
    const call: Promise<void> = race(Promise.resolve().then(() => fn(...args)), { ms: limit })
      .then((value) => {
        if (value === TIMED_OUT) throw new Error(`a host call did not finish within ${limit} ms, and was abandoned`);
        return value;
      })
      .then(
        (value) => this.settle(call, () => this.deliver(deferred, value)),
        (error: unknown) => this.settle(call, () => this.reject(deferred, error)),
      );
    this.inFlight.set(call, deferred);
    return deferred.handle;
  }

  private settle(call: Promise<void>, answer: () => void): void {
    if (this.closed) return;
    const deferred = this.inFlight.get(call)!;
    this.inFlight.delete(call);
    try {
      answer();
    } catch (error) {
      // Not even an exception fits in what is left of the program's memory.
      this.fault = error instanceof Error ? error.message : String(error);
    } finally {
      deferred.dispose();
      this.wake();
    }
  }

  /** The answer, or an exception in the program when it cannot be handed over (too large). */
  private deliver(deferred: QuickJSDeferredPromise, value: unknown): void {
    let handle: QuickJSHandle;
    try {
      handle = this.toGuest(value);
    } catch (error) {
      return this.reject(deferred, error);
    }
    handle.consume((answer) => deferred.resolve(answer));
  }

  private reject(deferred: QuickJSDeferredPromise, error: unknown): void {
    this.vm.newError(error instanceof Error ? error.message : String(error)).consume((handle) => deferred.reject(handle));
  }

  /** True when a host call settled, false when the deadline passed first. */
  private nextSettlement(): Promise<boolean> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), Math.max(0, this.deadline - Date.now()));
      this.wake = () => {
        clearTimeout(timer);
        resolve(true);
      };
    });
  }

  /**
   * A host value as a fresh guest value: through JSON, so no host object is ever reachable. The
   * text is copied into the module unchecked by the library, so an answer that cannot fit is refused.
   */
  private toGuest(value: unknown): QuickJSHandle {
    const json = JSON.stringify(value);
    if (json === undefined) return this.vm.undefined;
    if (json.length > this.limits.memoryBytes / ANSWER_SHARE) throw new Error(`an answer of ${json.length} characters does not fit in the program's memory`);
    return this.vm.newString(json).consume((text) => this.vm.unwrapResult(this.vm.callFunction(this.jsonParse!, this.vm.undefined, text)));
  }

  private format(arg: QuickJSHandle): string {
    if (this.vm.typeof(arg) === 'string') return this.vm.getString(arg);
    const value: unknown = this.vm.dump(arg);
    return JSON.stringify(value) ?? String(value);
  }

  private record(line: string): void {
    if (this.log.length < LOG_LINES) this.log.push(line.length > LOG_LINE_CHARS ? `${line.slice(0, LOG_LINE_CHARS)}… (${line.length} characters)` : line);
    else if (this.log.length === LOG_LINES) this.log.push(`… log truncated at ${LOG_LINES} lines`);
  }

  /** A thrown guest value in one line: `TypeError: boom`. */
  private message(handle: QuickJSHandle): string {
    const error: unknown = handle.consume((value) => this.vm.dump(value));
    if (!error || typeof error !== 'object' || !('message' in error)) return String(error);
    const { name, message } = error as { name?: unknown; message: unknown };
    return name ? `${String(name)}: ${String(message)}` : String(message);
  }

  /** QuickJS's own words for its limits, made plain: the model is told which limit it hit. */
  private failure(message: string): ProgramResult {
    if (message === 'InternalError: interrupted') return this.timedOut();
    if (/^(InternalError: )?out of memory$/.test(message)) {
      this.exhausted = true;
      return { ok: false, error: `memory limit: the program needed more than ${this.limits.memoryBytes} bytes`, log: this.log };
    }
    return { ok: false, error: message, log: this.log };
  }

  private timedOut(): ProgramResult {
    return { ok: false, error: `timeout: the program ran longer than ${this.limits.timeoutMs} ms`, log: this.log };
  }
}
