// Node-RED loads this file; the node is written in TypeScript (src/nodes/upload-node.ts) and built into dist/.
module.exports = require('../dist/src/nodes/upload-node').default;
