import type { BenchSection } from './lib/results.js';
import { accuracySection } from './accuracy/accuracy.js';
import { settlementSection } from './settlement/settlement.js';

/** Every section of `npm run bench`, in the order they run (the slow OCPP capacity one last). */
export const SECTIONS: BenchSection[] = [settlementSection, accuracySection];
