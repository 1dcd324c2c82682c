// Node-RED loads this file; the node is written in TypeScript (src/nodes/enhance-file-node.ts) and built into dist/.
module.exports = require('../dist/src/nodes/enhance-file-node').default;
