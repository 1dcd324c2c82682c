// Node-RED loads this file as the runtime part of the sidebar plugin; it is written in TypeScript (src/sidebar/plugin.ts) and built into dist/.
module.exports = require('../dist/src/sidebar/plugin').default;
