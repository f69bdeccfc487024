// Bundles the browser console (src/console/web) into dist/console-web: app-<hash>.js and
// app-<hash>.css (content-hashed, so the gateway may serve them as immutable) and the index.html
// that names them. No inline script or style: the console's CSP is default-src 'self'.
import { build } from 'esbuild';
import process from 'node:process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const src = join(root, 'src', 'console', 'web');
const out = join(root, 'dist', 'console-web');

rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });

const result = await build({
  entryPoints: [
    { in: join(src, 'main.ts'), out: 'app' },
    { in: join(src, 'app.css'), out: 'app' },
  ],
  outdir: out,
  entryNames: '[name]-[hash]',
  bundle: true,
  minify: true,
  format: 'esm',
  target: ['es2020', 'chrome100', 'firefox100', 'safari15'],
  sourcemap: 'linked',
  metafile: true,
  logLevel: 'silent',
  legalComments: 'linked',
});
if (result.warnings.length > 0) {
  for (const w of result.warnings) console.error(`console bundle: ${w.text}`);
  process.exit(1);
}

const outputs = Object.keys(result.metafile.outputs).map((p) => basename(p));
const pick = (ext) => {
  const name = outputs.find((o) => o.startsWith('app-') && o.endsWith(ext));
  if (!name) throw new Error(`console bundle: no ${ext} output`);
  return name;
};

writeFileSync(
  join(out, 'index.html'),
  `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <meta name="color-scheme" content="light" />
    <title>Site console</title>
    <link rel="icon" href="data:," />
    <link rel="stylesheet" href="/console/assets/${pick('.css')}" />
    <script type="module" src="/console/assets/${pick('.js')}"></script>
  </head>
  <body>
    <div id="app"><p class="boot">Loading the site console…</p></div>
    <noscript>The site console needs JavaScript.</noscript>
  </body>
</html>
`,
);
