// Node-RED loads this file; the node is written in TypeScript (src/nodes/wait-node.ts) and built into dist/.
module.exports = require('../dist/src/nodes/wait-node').default;
