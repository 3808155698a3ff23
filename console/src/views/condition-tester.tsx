import { useState } from 'preact/hooks';
import { claimsOf, evaluateCondition, type ConditionAnswer } from '../condition';
import { fromLocalInput } from '../time';
import { ErrorBox, Field, Section, useAction } from '../ui';

/** `YYYY-MM-DDTHH:MM` of now in local time, as a datetime-local input shows it. */
function localNow(): string {
  const d = new Date();
  d.setMinutes(d.getMinutes() - d.getTimezoneOffset());
  return d.toISOString().slice(0, 16);
}

/** The expression with a marker under the character at `position` (its 0-based offset). */
function Marked({ expression, position }: { expression: string; position: number }) {
  const at = Math.min(Math.max(position, 0), expression.length);
  return (
    <pre class="code condition-marked" aria-label={`The expression, marked at position ${at}`}>
      {expression.slice(0, at)}
      <mark>{expression.slice(at, at + 1) || ' '}</mark>
      {expression.slice(at + 1)}
    </pre>
  );
}

function Answer({ expression, answer }: { expression: string; answer: ConditionAnswer }) {
  const e = answer.error;
  return (
    <div role="status" class="condition-answer">
      <p class={answer.result ? 'allowed' : 'denied'}>
        {answer.result
          ? 'Holds (true): a binding with this condition would grant on this request.'
          : e?.stage === 'check'
            ? 'Does not check: a binding with this condition would be refused at create.'
            : e
              ? 'Does not evaluate (an error, so false): a binding with it would not grant.'
              : 'Does not hold (false): a binding with this condition would not grant.'}
      </p>
      {e ? (
        <>
          <p class="condition-error">
            <strong>{e.stage === 'check' ? 'Check error' : 'Evaluation error'}</strong> at position{' '}
            <span class="position">{e.position}</span>: {e.message}
          </p>
          <Marked expression={expression} position={e.position} />
        </>
      ) : null}
      {Object.keys(answer.values).length > 0 ? (
        <table class="rows" aria-label="Values read">
          <thead>
            <tr>
              <th scope="col">Variable</th>
              <th scope="col">Value</th>
            </tr>
          </thead>
          <tbody>
            {Object.entries(answer.values).map(([k, v]) => (
              <tr key={k}>
                <td>
                  <code>{k}</code>
                </td>
                <td>
                  <code>{JSON.stringify(v)}</code>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </div>
  );
}

/** The request's capability and resource, as typed (empty where left empty). */
function RequestFields({
  f,
  set,
}: {
  f: Record<string, string>;
  set: (k: string) => (v: string) => void;
}) {
  return (
    <>
      <Field
        label="request.capability"
        name="capability"
        placeholder="repo.push"
        value={f.capability ?? ''}
        onInput={set('capability')}
      />
      <Field
        label="resource.group.path"
        name="groupPath"
        placeholder="acme/payments"
        value={f.groupPath ?? ''}
        onInput={set('groupPath')}
      />
      <Field
        label="resource.group.uid"
        name="groupUid"
        value={f.groupUid ?? ''}
        onInput={set('groupUid')}
      />
      <Field
        label="resource.type"
        name="resourceType"
        placeholder="iam.arbor.dev/Group"
        value={f.resourceType ?? ''}
        onInput={set('resourceType')}
      />
      <Field
        label="resource.name"
        name="resourceName"
        value={f.resourceName ?? ''}
        onInput={set('resourceName')}
      />
    </>
  );
}

/**
 * Type a condition, describe a request (time, capability, the resource's group, type and
 * name, the token's claims) and see whether it holds, the values it read, and any error
 * with its position: the server evaluates it exactly as a decision would, reading nothing.
 */
export function ConditionTester() {
  const [expression, setExpression] = useState('');
  const [time, setTime] = useState(localNow);
  const [f, setF] = useState<Record<string, string>>({});
  const [claimsText, setClaimsText] = useState('');
  const [answer, setAnswer] = useState<{ expression: string; answer: ConditionAnswer }>();
  const tester = useAction();
  const set = (k: string) => (v: string) => setF({ ...f, [k]: v });
  return (
    <Section id="condition-tester-h" title="Condition tester">
      <form
        aria-label="Test a condition"
        onSubmit={(e) => {
          e.preventDefault();
          void tester.run(async () => {
            setAnswer(undefined);
            const at = fromLocalInput(time);
            const a = await evaluateCondition(expression, {
              ...(at ? { time: at } : {}),
              capability: f.capability ?? '',
              group: { uid: f.groupUid ?? '', path: f.groupPath ?? '' },
              resource: { type: f.resourceType ?? '', name: f.resourceName ?? '' },
              claims: claimsOf(claimsText),
            });
            setAnswer({ expression, answer: a });
          });
        }}
      >
        <label class="field">
          <span>Expression (CEL)</span>
          <textarea
            name="expression"
            rows={3}
            spellcheck={false}
            maxLength={1000}
            value={expression}
            placeholder='resource.group.path.startsWith("acme/payments")'
            onInput={(e) => setExpression((e.currentTarget as HTMLTextAreaElement).value)}
          />
        </label>
        <label class="field">
          <span>request.time (your local time)</span>
          <input
            type="datetime-local"
            name="time"
            value={time}
            onInput={(e) => setTime((e.currentTarget as HTMLInputElement).value)}
          />
        </label>
        <RequestFields f={f} set={set} />
        <label class="field">
          <span>token.claims, one name=value a line (a JSON value is taken as JSON)</span>
          <textarea
            name="claims"
            rows={3}
            spellcheck={false}
            value={claimsText}
            onInput={(e) => setClaimsText((e.currentTarget as HTMLTextAreaElement).value)}
          />
        </label>
        <button type="submit" disabled={tester.busy || expression.trim() === ''}>
          Test
        </button>
      </form>
      <ErrorBox error={tester.error} />
      {answer ? <Answer expression={answer.expression} answer={answer.answer} /> : null}
    </Section>
  );
}
