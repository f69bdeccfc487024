import { pino, type Logger } from 'pino';

export type { Logger };

/**
 * One JSON event per line. Secrets never reach a log call by design (we log ids, never
 * credentials); the redaction list is a second line of defence for headers and known fields.
 */
export function createLogger(level: string, destination?: NodeJS.WritableStream): Logger {
  const options = {
    level,
    base: { service: 'fleet-gateway' },
    redact: {
      paths: [
        'req.headers.authorization',
        'headers.authorization',
        '*.password',
        '*.token',
        '*.apiKey',
        'password',
        'token',
        'apiKey',
      ],
      censor: '[redacted]',
    },
  };
  return destination ? pino(options, destination) : pino(options);
}
