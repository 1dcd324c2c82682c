// Node-RED loads this file; the node is written in TypeScript (src/nodes/download-node.ts) and built into dist/.
module.exports = require('../dist/src/nodes/download-node').default;
