import { Section } from '../ui';
import { ClaimTester } from './claim-tester';
import { ConditionTester } from './condition-tester';

/**
 * Conditional role bindings, tried before they are relied on: the condition tester (any
 * expression over any described request), and the claim tester against every identity the
 * caller may list, with what the conditions of the identities the claims assume would say.
 */
export function ConditionsView() {
  return (
    <div>
      <h1>Conditions</h1>
      <Section id="conditions-about-h" title="About conditions">
        <p>
          A role binding may carry a condition: a CEL expression over <code>request.time</code>,{' '}
          <code>request.capability</code>, <code>resource.group</code>, <code>resource.type</code>,{' '}
          <code>resource.name</code> and <code>token.claims</code>. It grants only on a decision for
          which the expression holds; an error is a denial. The testers below read nothing but what
          you type.
        </p>
      </Section>
      <ConditionTester />
      <ClaimTester />
    </div>
  );
}
