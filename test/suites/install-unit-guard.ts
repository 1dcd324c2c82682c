// Loaded by mocha's --require in `npm run test:unit`, before any test file: the guard stays for the run.
import { installUnitGuard } from './unit-guard';

installUnitGuard();
