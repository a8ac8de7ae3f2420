import { test } from '@playwright/test';
import { hn, matrix } from '../src/index.ts';
import type { recordedHn } from '../src/sites/hn/site.ts';
import { expect } from './support.ts';

test('matrix: a project per model × layer stack, named, with the options in use', () => {
  const projects = matrix({
    models: ['scripted:overclaimer', { id: 'openai:gpt-4o-mini', temperature: 0 }],
    layers: { bare: [], verified: ['guardrails', 'verify'] },
    project: { testDir: 'specs/matrix', timeout: 60_000 },
  });
  expect(projects.map((project) => project.name)).toEqual([
    'scripted:overclaimer · bare',
    'scripted:overclaimer · verified',
    'openai:gpt-4o-mini · bare',
    'openai:gpt-4o-mini · verified',
  ]);
  expect(projects[1]).toMatchObject({ testDir: 'specs/matrix', timeout: 60_000, use: { model: 'scripted:overclaimer', layers: ['guardrails', 'verify'], layerStack: 'verified' } });
  expect(projects[3]!.use!.model).toEqual({ id: 'openai:gpt-4o-mini', temperature: 0 });
});

test('matrix: unnamed stacks are named by their layers; several sites add a third part', () => {
  const projects = matrix({
    models: ['scripted:diligent'],
    layers: [[], ['verify', ['retry', { attempts: 3 }]]],
    sites: { plain: hn.recorded(), injected: hn.recorded({ faults: { injection: { rank: 2 } } }) },
  });
  expect(projects.map((project) => project.name)).toEqual([
    'scripted:diligent · bare · plain',
    'scripted:diligent · bare · injected',
    'scripted:diligent · verify+retry · plain',
    'scripted:diligent · verify+retry · injected',
  ]);
  expect(projects[1]!.use!.site!.name).toBe('injected');
  expect((projects[1]!.use!.site!.create() as ReturnType<typeof recordedHn>).replica.options.faults.injection).toMatchObject({ rank: 2 });
});

test('hn.recorded checks its options when a config names the site', () => {
  expect(() => hn.recorded({ faults: { errorRate: 2 } })).toThrow(/faults\.errorRate/);
});
