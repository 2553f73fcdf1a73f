// The driver's request loop (SPEC C-WIRE-1): one JSON request per line on stdin, one reply
// per line on stdout. Nothing else is written on stdout; the loop ends with status 0 after
// `quit` or at the end of input.

import { createInterface } from "node:readline";
import { Engine } from "./engine.mjs";

/**
 * Serve the protocol for `backend` on `input`/`output` (default: the process's stdin and
 * stdout). Resolves when the input ends or `quit` was answered.
 */
export function serve(backend, { input = process.stdin, output = process.stdout, exit = true } = {}) {
  const engine = new Engine(backend);
  const rl = createInterface({ input, terminal: false, crlfDelay: Infinity });
  return new Promise((resolve) => {
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      rl.close();
      resolve();
      if (exit) process.exit(0);
    };
    rl.on("line", (line) => {
      if (done) return;
      // On Linux a write to a pipe or file is synchronous: the reply is out before the next line.
      output.write(engine.handleLine(line) + "\n");
      if (engine.quit) finish();
    });
    rl.on("close", finish);
  });
}
