import type { FastifyBaseLogger } from 'fastify';
import type { Bindings, ChildLoggerOptions, LevelWithSilentOrString, LogFn } from 'pino';

type Method = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
const METHODS: readonly Method[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/**
 * `request.log`: fastify makes a pino child (with the request id) for every request, and with the
 * redaction list that child serializes its bindings at once. Most requests never log (request
 * logging is off), so the child is made when the request first logs, with the same bindings and
 * options: the lines it writes are the ones the eager child would have written.
 */
class LazyRequestLogger implements FastifyBaseLogger {
  // Defined on the prototype below: each passes its arguments to the child.
  declare readonly fatal: LogFn;
  declare readonly error: LogFn;
  declare readonly warn: LogFn;
  declare readonly info: LogFn;
  declare readonly debug: LogFn;
  declare readonly trace: LogFn;
  declare readonly silent: LogFn;
  private made: FastifyBaseLogger | undefined;

  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Bindings,
    private readonly options: ChildLoggerOptions,
  ) {}

  get logger(): FastifyBaseLogger {
    this.made ??= this.parent.child(this.bindings, this.options);
    return this.made;
  }

  get level(): LevelWithSilentOrString {
    return this.made?.level ?? this.options.level ?? this.parent.level;
  }

  set level(level: LevelWithSilentOrString) {
    this.logger.level = level;
  }

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.logger.child(bindings, options);
  }
}

for (const method of METHODS) {
  Object.defineProperty(LazyRequestLogger.prototype, method, {
    value(this: LazyRequestLogger, ...args: unknown[]): void {
      const logger = this.logger;
      (logger[method] as (...a: unknown[]) => void).apply(logger, args);
    },
  });
}

/** fastify's childLoggerFactory: the request's logger, made on first use. */
export function lazyChildLogger(
  parent: FastifyBaseLogger,
  bindings: Bindings,
  options: ChildLoggerOptions,
): FastifyBaseLogger {
  return new LazyRequestLogger(parent, bindings, options);
}
