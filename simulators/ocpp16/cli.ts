#!/usr/bin/env node
import { runSimulatorCli } from '../shared/cli-program.js';
import { ChargePoint16 } from './charge-point.js';

runSimulatorCli({
  name: 'ocpp16-sim',
  protocolLabel: 'OCPP 1.6J',
  chargerNoun: 'charge points',
  create: (options) => new ChargePoint16(options),
});
