/**
 * A start that a stop signal ended before it finished (core/main.ts installs
 * its stop before the first listener opens): what has started stops as
 * after a start, and no error is reported, since the operator asked for it.
 */
export class StartCancelled extends Error {
  constructor(what = 'the start') {
    super(`${what} was stopped before it finished`);
    this.name = 'StartCancelled';
  }
}
