import { hn } from 'harness-eval';
import { attemptEach } from './attempt.ts';

// The whole suite: run by playwright.suite.config.ts, every task × the doubles × the layer stacks.
attemptEach(hn.suite);
