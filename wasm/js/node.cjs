// CommonJS entry: the same module instance as the ESM entry.
'use strict';
module.exports = require('./node.mjs');
