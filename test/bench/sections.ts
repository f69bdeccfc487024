import { accuracySection } from './accuracy/accuracy.js';
import { diskSection } from './disk/section.js';
import { quoteSection } from './http/quote.section.js';
import { startSection } from './http/start.section.js';
import type { BenchSection } from './lib/results.js';
import { loadSection } from './load/section.js';
import { ocppSection } from './ocpp/section.js';
import { settlementSection } from './settlement/settlement.js';
import { startupSection } from './startup/section.js';

/** Every section of `npm run bench`, in the order they run (the slow OCPP capacity one last). */
export const SECTIONS: BenchSection[] = [
  startSection,
  quoteSection,
  settlementSection,
  accuracySection,
  startupSection,
  loadSection,
  diskSection,
  ocppSection,
];
