/** Why an expression is refused: a message and the 0-based character offset it names. */
export class ConditionError extends Error {
  constructor(
    message: string,
    readonly position: number,
  ) {
    super(`${message} at position ${position}`);
  }
}
