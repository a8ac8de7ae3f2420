import { registerDoubles } from '../models/scripted/endpoint.ts';
import { hnDoubles } from '../sites/hn/doubles/index.ts';

// The shell's wiring: `scripted:<name>` resolves to HN's doubles (the one kit that has doubles).
// Imported for this effect wherever a spec or config names models (fixtures.ts, matrix.ts).
registerDoubles(hnDoubles);
