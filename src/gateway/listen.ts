import type { Server as HttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { refuseUpgrade } from '../api/edge-answers.js';
import { securityHeaders } from '../api/security-headers.js';
import type { GatewayConfig } from '../config/schema.js';
import type { CentralSystem } from '../ocpp/central-system.js';
import type { Logger } from '../shared/log.js';
import { readTlsFiles } from '../shared/tls-files.js';
import { serverTlsOptions } from '../shared/tls-server.js';
import type { Listeners } from './http.js';
import type { TransferBaseUrl } from './transfers.js';

export interface ListenDeps {
  config: GatewayConfig;
  log: Logger;
  api: FastifyInstance;
  operatorApi: FastifyInstance | undefined;
  central: CentralSystem;
  listeners: Listeners;
  transferBaseUrl: TransferBaseUrl;
}

export interface Addresses {
  url: string;
  ocppUrl: string;
  ocppTlsUrl: string | undefined;
  port: number;
  operatorUrl: string;
}

/**
 * Starts listening: the driver API with the chargers' WebSocket upgrades, then the operator API
 * on its own listener if configured, then the chargers' TLS listener if configured.
 */
export async function listen(d: ListenDeps): Promise<Addresses> {
  const { config, log, api, operatorApi, central } = d;
  central.attach(api.server, refuseUpgrade(securityHeaders(config.http.tls !== undefined)));
  await api.listen({ host: config.http.host, port: config.http.port });
  const address = api.server.address() as AddressInfo;
  const host = hostOf(address);
  const secure = config.http.tls !== undefined;
  log.info(
    { siteId: config.siteId, host: address.address, port: address.port, tls: secure },
    'gateway listening',
  );
  let operatorUrl = `${secure ? 'https' : 'http'}://${host}:${address.port}`;
  const operatorHttp = config.operator.http;
  if (operatorApi && operatorHttp) {
    await operatorApi.listen({ host: operatorHttp.host, port: operatorHttp.port });
    const opAddress = operatorApi.server.address() as AddressInfo;
    operatorUrl = `${operatorHttp.tls ? 'https' : 'http'}://${hostOf(opAddress)}:${opAddress.port}`;
    log.info({ host: opAddress.address, port: opAddress.port }, 'operator api listening');
  }
  if (config.transfers.baseUrl === undefined) d.transferBaseUrl.url = operatorUrl;
  let ocppTlsUrl: string | undefined;
  if (config.ocpp.tls) {
    const tlsConfig = config.ocpp.tls;
    const ocppTls = await listenOcppTls(tlsConfig, config.http.host);
    d.listeners.ocppTls = ocppTls;
    central.attach(ocppTls);
    const tlsAddress = ocppTls.address() as AddressInfo;
    ocppTlsUrl = `wss://${hostOf(tlsAddress)}:${tlsAddress.port}${config.ocpp.path}`;
    log.info(
      { host: tlsAddress.address, port: tlsAddress.port, clientCertificates: !!tlsConfig.ca },
      'ocpp tls listener',
    );
  }
  return {
    url: `${secure ? 'https' : 'http'}://${host}:${address.port}`,
    ocppUrl: `${secure ? 'wss' : 'ws'}://${host}:${address.port}${config.ocpp.path}`,
    ocppTlsUrl,
    port: address.port,
    operatorUrl,
  };
}

function hostOf(address: AddressInfo): string {
  return address.family === 'IPv6' ? `[${address.address}]` : address.address;
}

/**
 * The chargers' TLS listener (security profiles 2 and 3). With a CA it asks every charger for a
 * client certificate but lets those without one finish the handshake: the admission check decides
 * per charger (profile 2 needs none, profile 3 one for its own id). Plain HTTP requests get 404.
 */
async function listenOcppTls(
  tls: NonNullable<GatewayConfig['ocpp']['tls']>,
  defaultHost: string,
): Promise<HttpsServer> {
  const material = readTlsFiles(tls, 'ocpp.tls');
  // Loaded here: a gateway without this listener never needs node:https (nor node:tls).
  const { createServer: createHttpsServer } = await import('node:https');
  const server = createHttpsServer(
    {
      ...serverTlsOptions(material),
      requestCert: material.ca !== undefined,
      rejectUnauthorized: false,
    },
    (_request, response) => {
      response.writeHead(404, { 'content-type': 'application/json', 'cache-control': 'no-store' });
      response.end(JSON.stringify({ error: { code: 'not_found', message: 'OCPP only' } }));
    },
  );
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(tls.port, tls.host ?? defaultHost, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return server;
}
