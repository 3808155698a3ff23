import { z } from 'zod';
import type { ConditionTestAnswer } from '../resources/conditions/condition-tester.js';

/** The answer of `conditions:evaluate`, as the REST door shows it. */
export const conditionTestResponseSchema = z
  .object({
    result: z.boolean().meta({
      description: 'Whether the expression holds for the input (false when it failed).',
    }),
    reads: z.array(z.string()).meta({
      description:
        'The variables the expression reads (`request.time`, `resource.group.path`, …), ' +
        'sorted; empty when it does not check.',
    }),
    values: z.record(z.string(), z.unknown()).meta({
      description: 'Each variable read, with the value it had for this input.',
    }),
    error: z
      .object({
        stage: z.enum(['check', 'evaluation']).meta({
          description:
            '`check`: the expression would be refused at create (syntax, unknown name, ' +
            'type, cost); `evaluation`: it checks but failed on this input (a missing ' +
            'claim, a failed conversion), which the authorizer treats as a denial.',
        }),
        message: z.string(),
        position: z.number().int().meta({
          description: 'The 0-based character offset into the expression.',
        }),
      })
      .optional()
      .meta({ description: 'Why it did not hold as an answer: absent when it evaluated.' }),
  })
  .meta({ description: "A condition's result over the described request." });

export function conditionTestAnswerV2(
  a: ConditionTestAnswer,
): z.input<typeof conditionTestResponseSchema> {
  return {
    result: a.result,
    reads: a.reads,
    values: a.values,
    ...(a.error ? { error: a.error } : {}),
  };
}
