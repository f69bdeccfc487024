import { readFile, stat } from 'node:fs/promises';
import { dirname, extname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { CONSOLE_CSP } from '../api/security-headers.js';

/** Where `npm run build` puts the browser app, from dist/console/ or src/console/ alike. */
export const DEFAULT_BUNDLE_DIR = resolve(
  dirname(fileURLToPath(import.meta.url)),
  '..',
  '..',
  'dist',
  'console-web',
);

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.webp': 'image/webp',
  '.woff2': 'font/woff2',
  '.woff': 'font/woff',
};

const ASSET_ROUTE = '/console/assets/*';

const NOT_BUILT = 'console not built: run npm run build\n';

/**
 * The file an asset path names inside the bundle, or null when it could leave it: no `..`
 * segment, no backslash or NUL, no dotfile, and the resolved path must still be inside `root`.
 */
export function assetPath(root: string, requested: string): string | null {
  if (requested === '' || /[\\\0]/.test(requested)) return null;
  const segments = requested.split('/');
  if (segments.some((s) => s === '' || s === '..' || s === '.' || s.startsWith('.'))) return null;
  const full = resolve(root, ...segments);
  const inside = relative(root, full);
  if (inside === '' || inside.startsWith('..') || inside.split(sep).includes('..')) return null;
  return full;
}

async function regularFile(path: string): Promise<Buffer | null> {
  try {
    if (!(await stat(path)).isFile()) return null;
    return await readFile(path);
  } catch {
    return null;
  }
}

/**
 * The console's page and assets. Every client-side route (/console, /console/sessions/…) gets
 * index.html, never cached (it names the current build's assets); the assets are content-hashed
 * by the build, so they are cached for a year and never revalidated. The bundle is read from disk
 * per request: a rebuild is served without a restart, and the OS caches the few files anyway.
 */
export function registerConsoleStatic(app: FastifyInstance, bundleDir: string): void {
  const root = resolve(bundleDir);
  const hidden = { schema: { hide: true } };
  const page = async (reply: FastifyReply) => {
    const html = await regularFile(join(root, 'index.html'));
    if (!html) return reply.code(503).type('text/plain; charset=utf-8').send(NOT_BUILT);
    return reply.type(CONTENT_TYPES['.html'] as string).send(html);
  };

  void app.register(async (scope) => {
    // After the server's own onSend (which sets the API's headers on every answer): the page's
    // policy replaces the API's, and a found asset may be cached.
    scope.addHook('onSend', async (request, reply, payload) => {
      reply.header('content-security-policy', CONSOLE_CSP);
      if (request.routeOptions.url === ASSET_ROUTE && reply.statusCode === 200) {
        reply.header('cache-control', 'public, max-age=31536000, immutable');
      }
      return payload;
    });
    scope.get('/console', hidden, async (_request, reply) => page(reply));
    scope.get('/console/*', hidden, async (_request, reply) => page(reply));
    scope.get<{ Params: { '*': string } }>(ASSET_ROUTE, hidden, async (request, reply) => {
      const path = assetPath(root, request.params['*']);
      const body = path === null ? null : await regularFile(path);
      if (path === null || body === null) {
        return reply.code(404).type('text/plain; charset=utf-8').send('no such console asset\n');
      }
      return reply
        .type(CONTENT_TYPES[extname(path).toLowerCase()] ?? 'application/octet-stream')
        .send(body);
    });
  });
}
