import { mkdtempSync, rmSync } from 'node:fs';
import { connect, createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import type { ModelWaits } from '../core/model.ts';
import { parseJsonObject } from '../text.ts';
import { ownFolder } from '../leftovers.ts';

/**
 * Slots: at most `limit` calls at once to one endpoint, across every worker of a run. A run's
 * coordinator (a tiny server on a Unix socket, started once in the Playwright runner) hands them
 * out; a worker holds its slot as an open connection, so a worker that dies gives its slots back
 * as its connections close. Without a coordinator (a script calling evaluate() itself) the
 * limit holds within the process.
 */

/** Where the run's coordinator listens: workers inherit the runner's environment. */
export const SLOTS_ENV = 'HARNESS_EVAL_SLOTS';

/** Gives a slot back; calling it again does nothing. */
export type Release = () => void;

interface Waiter {
  limit: number;
  grant(): void;
}

/** The slots of one process, by endpoint key, handed out first come first served. */
class Slots {
  private readonly pools = new Map<string, { active: number; queue: Waiter[] }>();

  acquire(key: string, limit: number, signal?: AbortSignal): Promise<Release> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    let pool = this.pools.get(key);
    if (!pool) this.pools.set(key, (pool = { active: 0, queue: [] }));
    const slots = pool;
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        slots.queue.splice(slots.queue.indexOf(waiter), 1);
        this.pump(key);
        reject(signal!.reason);
      };
      const waiter: Waiter = {
        limit,
        grant: () => {
          signal?.removeEventListener('abort', onAbort);
          slots.active += 1;
          let released = false;
          resolve(() => {
            if (released) return;
            released = true;
            slots.active -= 1;
            this.pump(key);
          });
        },
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      slots.queue.push(waiter);
      this.pump(key);
    });
  }

  /** Grants the queue's head while its limit allows: strictly in order, so no caller waits for ever. */
  private pump(key: string): void {
    const pool = this.pools.get(key)!;
    while (pool.queue.length > 0 && pool.active < pool.queue[0]!.limit) pool.queue.shift()!.grant();
    if (pool.active === 0 && pool.queue.length === 0) this.pools.delete(key);
  }
}

const inProcess = new Slots();

/**
 * A slot for one call to the endpoint `key` (at most `limit` at once): from the run's coordinator
 * when the environment names one, else within this process. Waits until one is free; rejects with
 * the signal's reason if it aborts first.
 */
export function acquireSlot(key: string, limit: number, signal?: AbortSignal, env: NodeJS.ProcessEnv = process.env): Promise<Release> {
  const path = env[SLOTS_ENV];
  return path ? remoteSlot(path, key, limit, signal) : inProcess.acquire(key, limit, signal);
}

const GRANTED = 'granted\n';
const requestSchema = z.object({ key: z.string().min(1).max(2048), limit: z.int().positive() }).strict();

function remoteSlot(path: string, key: string, limit: number, signal?: AbortSignal): Promise<Release> {
  if (signal?.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const socket = connect(path);
    let granted = false;
    const fail = (error: unknown) => {
      signal?.removeEventListener('abort', onAbort);
      socket.destroy();
      reject(error);
    };
    const onAbort = () => fail(signal!.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    socket.setEncoding('utf8');
    socket.on('connect', () => socket.write(`${JSON.stringify({ key, limit })}\n`));
    socket.on('data', (data: string) => {
      if (granted || data !== GRANTED) return;
      granted = true;
      signal?.removeEventListener('abort', onAbort);
      resolve(() => socket.destroy());
    });
    // Once granted, the coordinator going away (the run ending) changes nothing for the call in flight.
    socket.on('error', (error) => {
      if (!granted) fail(new Error(`the run's slot coordinator (${SLOTS_ENV}=${path}) did not answer: ${error.message}`));
    });
    socket.on('close', () => {
      if (!granted) fail(new Error(`the run's slot coordinator (${SLOTS_ENV}=${path}) closed the connection`));
    });
  });
}

export interface SlotCoordinator {
  /** The Unix socket it listens on (what SLOTS_ENV holds). */
  path: string;
  close(): Promise<void>;
}

/**
 * The run's coordinator: each connection asks for one slot with a line `{"key","limit"}`, is
 * answered `granted` when it has it, and holds it until it closes. It listens at once (a Unix
 * socket binds synchronously), so a caller that cannot await it may advertise it straight away.
 */
export function startSlotCoordinator(): SlotCoordinator {
  const slots = new Slots();
  const dir = mkdtempSync(join(tmpdir(), ownFolder('slots')));
  const path = join(dir, 'slots.sock');
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    const gone = new AbortController();
    let release: Release | undefined;
    let line: string | undefined = '';
    sockets.add(socket);
    socket.setEncoding('utf8');
    socket.on('error', () => {});
    socket.on('close', () => {
      sockets.delete(socket);
      gone.abort(new Error('the client closed the connection'));
      release?.();
    });
    socket.on('data', (data: string) => {
      if (line === undefined) return;
      line += data;
      const end = line.indexOf('\n');
      if (end === -1) {
        if (line.length > 4096) socket.destroy();
        return;
      }
      const parsed = requestSchema.safeParse(parseJsonObject(line.slice(0, end)));
      line = undefined;
      if (!parsed.success) return void socket.destroy();
      slots.acquire(parsed.data.key, parsed.data.limit, gone.signal).then(
        (granted) => {
          if (socket.destroyed) return granted();
          release = granted;
          socket.write(GRANTED);
        },
        () => {},
      );
    });
  });
  server.listen(path);
  // The runner may exit without a teardown (killed): the coordinator never holds it up.
  server.unref();
  return {
    path,
    close: () =>
      new Promise((resolve) => {
        server.close(() => {
          rmSync(dir, { recursive: true, force: true });
          resolve();
        });
        for (const socket of sockets) socket.destroy();
      }),
  };
}

/**
 * Starts the run's coordinator and advertises it in `env` for the workers to come, unless one is
 * advertised already; answers how to stop it. Synchronous: the reporter's onBegin, which Playwright
 * does not await, calls it before any worker starts.
 */
export function coordinateRun(env: NodeJS.ProcessEnv = process.env): () => Promise<void> {
  if (env[SLOTS_ENV]) return async () => {};
  const coordinator = startSlotCoordinator();
  env[SLOTS_ENV] = coordinator.path;
  return async () => {
    if (env[SLOTS_ENV] === coordinator.path) delete env[SLOTS_ENV];
    await coordinator.close();
  };
}

/** Per run (its waits) and endpoint: the slots its calls hold, and the ends of its queued calls' waits. */
const runs = new WeakMap<ModelWaits, Map<string, { held: number; queued: Set<() => void> }>>();

/**
 * `work`, holding a slot of the endpoint `key`; with no limit, at once. Queueing is timed as a
 * wait (the run's time, not the agent's) only while none of the run's own calls holds a slot of
 * the endpoint: behind its own calls, a run waits on itself, or an agent flooding the gateway
 * would hold its clock for ever.
 */
export async function withSlot<T>(key: string, limit: number | undefined, request: { signal?: AbortSignal; waits?: ModelWaits }, work: () => Promise<T>): Promise<T> {
  if (limit === undefined) return work();
  const { waits } = request;
  let byKey = waits && runs.get(waits);
  if (waits && !byKey) runs.set(waits, (byKey = new Map()));
  let mine = byKey?.get(key);
  if (byKey && !mine) byKey.set(key, (mine = { held: 0, queued: new Set() }));
  const end = mine && mine.held === 0 ? waits!.begin() : undefined;
  if (end) mine!.queued.add(end);
  let release: Release;
  try {
    release = await acquireSlot(key, limit, request.signal);
  } finally {
    end?.();
    if (end) mine!.queued.delete(end);
  }
  if (mine) {
    mine.held += 1;
    // The run holds a slot now: its other calls queue behind it, and wait on themselves.
    for (const queuedEnd of mine.queued) queuedEnd();
    mine.queued.clear();
  }
  try {
    return await work();
  } finally {
    if (mine) mine.held -= 1;
    release();
  }
}
