// Preloaded into a CLI child process (`NODE_OPTIONS=--import <this file>`, test/cli.test.ts): the
// native secp256k1 binding fails to load, as on a platform with no prebuilt binary and no compiler.
// The keeper loads it through require (src/venue/signing/curve.ts), which resolves here first.
import Module from 'node:module';

const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  if (request === 'secp256k1/bindings') throw new Error('No native build was found for platform=test (simulated by no-native-curve.mjs)');
  return resolve.call(this, request, ...rest);
};
