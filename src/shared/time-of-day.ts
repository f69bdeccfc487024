import { z } from 'zod';

/** A local time of day as config writes it, HH:MM: tariff windows and site power schedules. */
export const hhmm = z
  .string()
  .regex(/^([01][0-9]|2[0-3]):[0-5][0-9]$/, 'a local time HH:MM (00:00-23:59)');
