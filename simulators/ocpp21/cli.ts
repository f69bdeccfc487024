#!/usr/bin/env node
import { runSimulatorCli } from '../shared/cli-program.js';
import { ChargePoint21 } from './charge-point.js';

runSimulatorCli({
  name: 'ocpp21-sim',
  protocolLabel: 'OCPP 2.1',
  chargerNoun: 'charging stations',
  create: (options) => new ChargePoint21(options),
});
