import type { BenchSection } from './lib/results.js';
import { ocppSection } from './ocpp/section.js';

/** Every section of `npm run bench`, in the order they run (the slow OCPP capacity one last). */
export const SECTIONS: BenchSection[] = [ocppSection];
