#!/usr/bin/env node
// Runs the chartgate binary of this platform: the package
// @chartgate/chartgate-PLATFORM-ARCH, an optional dependency of this one
// that npm installs only where its "os" and "cpu" match. Arguments,
// standard input and output, the exit code and the signals that stop it
// pass through.
'use strict';

const { spawn } = require('node:child_process');

const pkg = `@chartgate/chartgate-${process.platform}-${process.arch}`;
const exe = process.platform === 'win32' ? 'chartgate.exe' : 'chartgate';

let bin;
try {
  bin = require.resolve(`${pkg}/bin/${exe}`);
} catch {
  process.stderr.write(
    `chartgate: no chartgate binary for ${process.platform}-${process.arch}: the package ${pkg} is not installed. ` +
      'chartgate is built for linux, darwin and win32 on x64 and arm64; npm installs the package of the platform ' +
      'with chartgate unless optional dependencies are omitted (--omit=optional). Without Node.js, take the archive ' +
      'of the release, or go install github.com/chartgate/chartgate/cmd/chartgate@latest.\n'
  );
  process.exit(1);
}

const child = spawn(bin, process.argv.slice(2), { stdio: 'inherit', windowsHide: true });
const forward = ['SIGINT', 'SIGTERM', 'SIGHUP'];
for (const sig of forward) {
  process.on(sig, () => child.kill(sig));
}
child.on('error', (err) => {
  process.stderr.write(`chartgate: running ${bin}: ${err.message}\n`);
  process.exit(1);
});
child.on('exit', (code, signal) => {
  if (signal) {
    for (const sig of forward) process.removeAllListeners(sig);
    process.kill(process.pid, signal);
    return;
  }
  process.exit(code === null ? 1 : code);
});
