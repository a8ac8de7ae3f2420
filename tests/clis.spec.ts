import { commandAgent } from '../src/agents/command.ts';
import { installedCli } from '../scripts/install-clis.ts';
import { expect, firstStory, runAgent, test } from './support.ts';

const cli = (name: 'claude' | 'codex' | 'gemini', link: string) => commandAgent([`examples/clis/${name}.sh`, link], { name, account: true, timeoutMs: 120_000 });

for (const name of ['claude', 'codex', 'gemini'] as const) {
  test.describe(name, () => {
    const link = installedCli(name);
    test.skip(!link, `${name} is not installed (npm run clis)`);
    for (const model of ['scripted:snapshot-diligent', 'scripted:snapshot-overclaimer']) {
      test(model, async ({ context }, testInfo) => {
        test.setTimeout(180_000);
        const { result, site, attachments } = await runAgent(context, testInfo, cli(name, link!), { model });
        console.log(name, model, JSON.stringify({ ...result, trace: undefined }, null, 1).slice(0, 3000));
        console.log(attachments.get('agent-stdout.txt')?.slice(0, 3000));
        console.log(attachments.get('agent-stderr.txt')?.slice(0, 3000));
        const fs = await import('node:fs');
        fs.writeFileSync(`/tmp/clis-${name}-${model.slice(9)}.json`, JSON.stringify(result.trace, null, 1));
        void site; void firstStory; void expect;
      });
    }
  });
}
