#!/usr/bin/env node
import { runSimulatorCli } from '../shared/cli-program.js';
import { ChargePoint201 } from './charge-point.js';

runSimulatorCli({
  name: 'ocpp201-sim',
  protocolLabel: 'OCPP 2.0.1',
  chargerNoun: 'charging stations',
  create: (options) => new ChargePoint201(options),
});
