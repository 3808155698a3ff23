import { z } from 'zod';

/**
 * The classes of expensive calls that spend a cost budget (docs/operations.md, "Budgets").
 * Each call of a class spends one point of its caller's budget and one of its caller's
 * organization's; which calls belong to which class is `src/budgets.ts`'s one table.
 */
export const BUDGET_CLASSES = [
  'simulate',
  'access_query',
  'access_request',
  'audit_read',
  'sts_exchange',
  'registry_token',
] as const;

export type BudgetClass = (typeof BUDGET_CLASSES)[number];

/** `points` per `seconds`: a fixed window that starts at a key's first spend. */
export interface BudgetWindow {
  points: number;
  seconds: number;
}

export interface BudgetConfig {
  /** ARBOR_BUDGETS: off spends and refuses nothing. */
  on: boolean;
  /** Per class: the budget of one caller, and of one organization's callers together. */
  classes: Readonly<Record<BudgetClass, { identity: BudgetWindow; organization: BudgetWindow }>>;
}

/**
 * The defaults: far above what a person, a pipeline or the test suite does in a minute
 * (a plan is one simulation; a pull one registry token), low enough that one caller in a
 * loop cannot keep the database busy for everyone. An organization's budget is five times
 * (ten for tokens, which many workloads of one organization ask for) a caller's.
 */
const DEFAULTS: Record<BudgetClass, readonly [identity: number, organization: number]> = {
  simulate: [600, 3_000],
  access_query: [1_200, 6_000],
  access_request: [120, 600],
  audit_read: [600, 3_000],
  sts_exchange: [600, 6_000],
  registry_token: [1_200, 12_000],
};
const DEFAULT_SECONDS = 60;

const WINDOW = /^(\d{1,9})\/(\d{1,6})$/;

/** `points/seconds`, e.g. `600/60`; unset: the class's default. */
const windowVar = (points: number) =>
  z
    .string()
    .regex(WINDOW, { error: 'must be points/seconds, e.g. 600/60' })
    .transform((v) => {
      const [, p, s] = WINDOW.exec(v)!;
      return { points: Number(p), seconds: Number(s) };
    })
    .refine((w) => w.points >= 1 && w.seconds >= 1 && w.seconds <= 86_400, {
      error: 'must be points/seconds with at least 1 point and 1 to 86400 seconds',
    })
    .optional()
    .transform((w): BudgetWindow => w ?? { points, seconds: DEFAULT_SECONDS });

const variableOf = (c: BudgetClass) => `ARBOR_BUDGET_${c.toUpperCase()}`;

/** The budget variables of config.ts's environment schema: one pair per class, and the switch. */
export const budgetVariables = {
  ARBOR_BUDGETS: z
    .enum(['on', 'off', 'true', 'false', '1', '0'], { error: 'must be on or off' })
    .optional()
    .transform((v) => v === undefined || v === 'on' || v === 'true' || v === '1'),
  ...(Object.fromEntries(
    BUDGET_CLASSES.flatMap((c) => [
      [variableOf(c), windowVar(DEFAULTS[c][0])],
      [`${variableOf(c)}_ORG`, windowVar(DEFAULTS[c][1])],
    ]),
  ) as Record<
    `ARBOR_BUDGET_${Uppercase<BudgetClass>}${'' | '_ORG'}`,
    ReturnType<typeof windowVar>
  >),
};

type BudgetEnvironment = z.output<z.ZodObject<typeof budgetVariables>>;

/** The budgets of a parsed environment. */
export function budgetsOf(e: BudgetEnvironment): Readonly<BudgetConfig> {
  const classes = Object.fromEntries(
    BUDGET_CLASSES.map((c) => {
      const name = variableOf(c) as `ARBOR_BUDGET_${Uppercase<BudgetClass>}`;
      return [c, Object.freeze({ identity: e[name], organization: e[`${name}_ORG`] })];
    }),
  ) as BudgetConfig['classes'];
  return Object.freeze({ on: e.ARBOR_BUDGETS, classes: Object.freeze(classes) });
}
