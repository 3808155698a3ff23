/**
 * A refusal an admin command prints as it is (`arbor: <message>`, exit 1): no server to
 * reach, no token for it. Its own module so that the command tree loads it cheaply.
 */
export class AdminTargetError extends Error {}
