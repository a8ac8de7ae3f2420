import { hn } from 'harness-eval';
import { attemptEach, oneTaskPerTag } from './attempt.ts';

// The main job's sample of the suite: a task per tag, so every kind of task is attempted on every push.
attemptEach(oneTaskPerTag(hn.suite));
