import { useState } from 'preact/hooks';
import { listPage, post } from '../api';
import { useCan } from '../can';
import { localTime } from '../time';
import { ErrorBox, Section, useAction, useLoad } from '../ui';

const PATH = '/iam/v2beta1/accessReviews';

interface Review {
  uid: string;
  state: string;
  dueTime: string;
  defaultDecision: string;
  itemCount: number;
  decidedCount: number;
}
interface Item {
  uid: string;
  groupUid: string;
  holder: { uid: string; name: string };
  role: { uid: string; name: string };
  /** Paths of names, where the caller may list them (else the names the item carries). */
  holderPath?: string;
  rolePath?: string;
  lastUsedTime?: string;
  unused: boolean;
  decision?: string;
  reason?: string;
}

/**
 * A group's access reviews (docs/access-reviews.md): the reviews of this group, opening one
 * (for whoever may update and delete bindings here), and a review's items, each kept,
 * shortened by 30 days or removed with a reason. The server decides who may; a refusal is
 * shown as the API words it.
 */
export function ReviewsTab({ uid }: { uid: string }) {
  const can = useCan();
  const [version, setVersion] = useState(0);
  const [open, setOpen] = useState<string | undefined>(undefined);
  const reviews = useLoad(
    () => listPage<Review>(PATH, 'accessReviews', { 'uidp.children_of': uid, page_size: 50 }),
    [uid, version],
  );
  return (
    <>
      <Section id="reviews-h" title="Access reviews">
        {reviews.error ? <ErrorBox error={reviews.error} /> : null}
        {reviews.data && reviews.data.items.length === 0 ? (
          <p class="count">No reviews of this group.</p>
        ) : null}
        {reviews.data && reviews.data.items.length > 0 ? (
          <table class="rows">
            <thead>
              <tr>
                <th scope="col">State</th>
                <th scope="col">Due</th>
                <th scope="col">Decided</th>
                <th scope="col">Default</th>
                <th scope="col">Items</th>
              </tr>
            </thead>
            <tbody>
              {reviews.data.items.map((r) => (
                <tr key={r.uid}>
                  <td>{r.state}</td>
                  <td>{localTime(r.dueTime)}</td>
                  <td>
                    {r.decidedCount} of {r.itemCount}
                  </td>
                  <td>{r.defaultDecision}</td>
                  <td>
                    <button type="button" onClick={() => setOpen(r.uid)}>
                      Show items
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        ) : null}
        {can('role_bindings.update') && can('role_bindings.delete') ? (
          <OpenReview group={uid} onOpened={() => setVersion((v) => v + 1)} />
        ) : null}
      </Section>
      {open ? <Items review={open} onDecided={() => setVersion((v) => v + 1)} /> : null}
    </>
  );
}

function OpenReview({ group, onOpened }: { group: string; onOpened: () => void }) {
  const [days, setDays] = useState('14');
  const [fallback, setFallback] = useState('keep');
  const action = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      const dueTime = new Date(Date.now() + Number(days) * 86_400_000).toISOString();
      await post(`${PATH}/${group}`, { dueTime, defaultDecision: fallback });
      onOpened();
    });
  };
  return (
    <form class="inline-form" onSubmit={submit} aria-label="Open a review">
      <label class="field">
        <span>Due in days</span>
        <input
          type="number"
          min={1}
          max={365}
          value={days}
          onInput={(e) => setDays((e.currentTarget as HTMLInputElement).value)}
        />
      </label>
      <label class="field">
        <span>When due, undecided bindings are</span>
        <select
          value={fallback}
          onChange={(e) => setFallback((e.currentTarget as HTMLSelectElement).value)}
        >
          <option value="keep">kept</option>
          <option value="expire">expired</option>
        </select>
      </label>
      <button type="submit" disabled={action.busy}>
        Open a review
      </button>
      {action.error ? <ErrorBox error={action.error} /> : null}
    </form>
  );
}

function Items({ review, onDecided }: { review: string; onDecided: () => void }) {
  const [version, setVersion] = useState(0);
  const items = useLoad(
    () => listPage<Item>(`${PATH}:items`, 'items', { review, page_size: 100 }),
    [review, version],
  );
  return (
    <Section id="review-items-h" title="Review items">
      {items.error ? <ErrorBox error={items.error} /> : null}
      {items.data ? (
        <table class="rows">
          <thead>
            <tr>
              <th scope="col">Holder</th>
              <th scope="col">Role</th>
              <th scope="col">Last used</th>
              <th scope="col">Finding</th>
              <th scope="col">Decision</th>
            </tr>
          </thead>
          <tbody>
            {items.data.items.map((i) => (
              <tr key={i.uid}>
                <td>{i.holderPath ?? i.holder.name}</td>
                <td>{i.rolePath ?? i.role.name}</td>
                <td>{i.lastUsedTime ? localTime(i.lastUsedTime) : 'never'}</td>
                <td>{i.unused ? 'unused' : ''}</td>
                <td>
                  {i.decision ? (
                    `${i.decision}: ${i.reason ?? ''}`
                  ) : (
                    <Decide
                      item={i}
                      onDone={() => {
                        setVersion((v) => v + 1);
                        onDecided();
                      }}
                    />
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </Section>
  );
}

function Decide({ item, onDone }: { item: Item; onDone: () => void }) {
  const [reason, setReason] = useState('');
  const action = useAction();
  const decide = (decision: string) =>
    void action.run(async () => {
      await post(`${PATH}:decide`, {
        itemUid: item.uid,
        decision,
        reason,
        ...(decision === 'shorten'
          ? { expireTime: new Date(Date.now() + 30 * 86_400_000).toISOString() }
          : {}),
      });
      onDone();
    });
  const who = `${item.holder.name} as ${item.role.name}`;
  return (
    <div class="decide">
      <label class="field">
        <span>Reason for {who}</span>
        <input
          type="text"
          maxLength={1024}
          value={reason}
          onInput={(e) => setReason((e.currentTarget as HTMLInputElement).value)}
        />
      </label>
      <button type="button" disabled={action.busy} onClick={() => decide('keep')}>
        Keep
      </button>
      <button type="button" disabled={action.busy} onClick={() => decide('shorten')}>
        Shorten to 30 days
      </button>
      <button type="button" disabled={action.busy} onClick={() => decide('remove')}>
        Remove
      </button>
      {action.error ? <ErrorBox error={action.error} /> : null}
    </div>
  );
}
