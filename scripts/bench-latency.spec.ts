import { expect, hn, test } from 'harness-eval';

// `npm run bench:latency`'s runs: BENCH_RUNS runs of the classic task by the diligent double,
// answered by the bench's endpoint (OPENAI_BASE_URL) after its fixed latency, at most
// BENCH_CONCURRENCY calls at once across the workers (the endpoint's `concurrency`). Each test
// keeps BENCH_TRIALS of them in flight (harness.trials), each in a context of its own.
const runs = Number(process.env.BENCH_RUNS ?? 96);
const trials = Number(process.env.BENCH_TRIALS ?? 1);
test.use({ model: { id: 'openai:diligent', concurrency: Number(process.env.BENCH_CONCURRENCY ?? 2) }, layers: [] });

for (let index = 0; index < Math.ceil(runs / trials); index++) {
  const count = Math.min(trials, runs - index * trials);
  test(`runs ${index * trials + 1}–${index * trials + count}`, async ({ harness }) => {
    for (const run of await harness.trials(hn.tasks.upvoteFirstPost, count)) expect(run.judged).toBe(true);
  });
}
