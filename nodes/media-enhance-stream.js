// Node-RED loads this file; the node is written in TypeScript (src/nodes/enhance-stream-node.ts) and built into dist/.
module.exports = require('../dist/src/nodes/enhance-stream-node').default;
