import { expect, hn, test } from 'harness-eval';

// `npm run bench:latency`'s runs: BENCH_RUNS runs of the classic task by the diligent double,
// answered by the bench's endpoint (OPENAI_BASE_URL) after its fixed latency, at most
// BENCH_CONCURRENCY calls at once across the workers (the endpoint's `concurrency`).
const runs = Number(process.env.BENCH_RUNS ?? 96);
test.use({ model: { id: 'openai:diligent', concurrency: Number(process.env.BENCH_CONCURRENCY ?? 2) }, layers: [] });

for (let index = 0; index < runs; index++) {
  test(`run ${index + 1}`, async ({ harness }) => {
    const run = await harness.run(hn.tasks.upvoteFirstPost);
    expect(run.judged).toBe(true);
  });
}
