import type { GatewayConfig } from '../../config/schema.js';

/**
 * The /healthz URL a probe on the gateway's own machine (a container HEALTHCHECK, a watchdog)
 * uses: https when http.tls is set, and loopback when the gateway listens on every address.
 */
export function healthUrl(config: GatewayConfig): string {
  const { host, port, tls } = config.http;
  const local =
    host === '0.0.0.0'
      ? '127.0.0.1'
      : host === '::'
        ? '::1'
        : host === 'localhost'
          ? '127.0.0.1'
          : host;
  return `${tls ? 'https' : 'http'}://${local.includes(':') ? `[${local}]` : local}:${port}/healthz`;
}

/**
 * GET the URL; true on a 200 within timeoutMs. The certificate is not checked: the site's
 * certificate names the site's host name, not the loopback address the probe dials, and the probe
 * asks whether this process answers, not who it is.
 */
export async function probeHealth(url: string, timeoutMs: number): Promise<boolean> {
  // Loaded by the probe alone: every command's start (serve's included) would pay for node:http
  // as an ES import, which loads Node's bundled undici.
  const { request } = url.startsWith('https:')
    ? await import('node:https')
    : await import('node:http');
  return new Promise((resolve) => {
    const req = request(
      url,
      { method: 'GET', timeout: timeoutMs, rejectUnauthorized: false },
      (res) => {
        res.resume();
        resolve(res.statusCode === 200);
      },
    );
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', () => resolve(false));
    req.end();
  });
}
