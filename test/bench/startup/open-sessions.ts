import { mintToken, startSession } from '../../helpers/http.js';
import { RAW_PROTOCOLS, type RawStation } from '../../helpers/raw-stations.js';
import { API_KEY, driverEmail } from '../lib/gateway-child.js';

/**
 * Opens `stations.length × 2` charging sessions through the real path: HTTP Start, the remote
 * start answered by a raw station, and its StartTransaction / TransactionEvent Started. Stations
 * alternate between OCPP 1.6J and 2.0.1. Connectors of one station go one after the other (a
 * raw station starts the transaction its last remote start named); stations go `parallel` at once.
 */
export async function openSessions(
  url: string,
  ocppUrl: string,
  chargerIds: string[],
  drivers: number,
  amount: number,
  parallel = 50,
): Promise<{ stations: RawStation[]; sessionIds: string[] }> {
  const tokens = await Promise.all(
    Array.from({ length: drivers }, (_, i) => mintToken(url, API_KEY, driverEmail(i))),
  );
  const stations: RawStation[] = [];
  const sessionIds: string[] = [];
  let next = 0;
  const worker = async () => {
    while (next < chargerIds.length) {
      const i = next++;
      const chargerId = chargerIds[i] as string;
      const protocol = RAW_PROTOCOLS[i % RAW_PROTOCOLS.length];
      if (!protocol) throw new Error('no raw protocol');
      const station = await protocol.connect(ocppUrl, chargerId);
      stations.push(station);
      await station.boot();
      for (const connector of [1, 2]) {
        const d = (i * 2 + connector) % drivers;
        const res = await startSession(
          url,
          tokens[d] as string,
          { chargerId, connectorId: String(connector), driverEmail: driverEmail(d) },
          amount,
        );
        if (res.status !== 200)
          throw new Error(
            `start on ${chargerId}/${connector}: ${res.status} ${JSON.stringify(res.body)}`,
          );
        sessionIds.push((res.body as { sessionId: string }).sessionId);
        // No meter sample right after: two registers milliseconds apart would look like megawatts
        // to the paid-energy watch, which would stop the session at once.
        await station.start(1_000);
        await station.send(station.status(connector, 'Charging'));
      }
    }
  };
  await Promise.all(Array.from({ length: parallel }, worker));
  return { stations, sessionIds };
}
