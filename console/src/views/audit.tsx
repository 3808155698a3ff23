import { useState } from 'preact/hooks';
import { listPage, type Page } from '../api';
import { go, href } from '../route';
import { ErrorBox, Field, Section, Uid, useLoad } from '../ui';

interface AuditEvent {
  id: string;
  time: string;
  actor: string;
  door: string;
  resourceType: string;
  resourceUid: string;
  operation: string;
  eventType: string;
  changedFields?: string[];
}

/** The audit timeline of one object (`resource`) or of everything in a group (`group`). */
export function AuditView({ query }: { query: URLSearchParams }) {
  const group = query.get('group') ?? '';
  const resource = query.get('resource') ?? '';
  const [tokens, setTokens] = useState<string[]>([]);
  const [text, setText] = useState(group || resource);
  const token = tokens[tokens.length - 1];
  const page = useLoad<Page<AuditEvent> | undefined>(
    () =>
      group || resource
        ? listPage<AuditEvent>('/audit/v2beta1/events', 'events', {
            ...(group ? { 'uidp.descendants_of': group } : { resource_uid: resource }),
            order_by: 'time desc',
            page_size: 50,
            page_token: token,
          })
        : Promise.resolve(undefined),
    [group, resource, token],
  );
  return (
    <div>
      <h1>Audit</h1>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          setTokens([]);
          go(href('audit', '', { group: text }));
        }}
      >
        <Field label="Group uid" name="audit-group" value={text} onInput={setText} required />
        <button type="submit">Show its timeline</button>
      </form>
      <Section
        id="timeline-h"
        title={group ? 'Everything in the group' : resource ? 'This object' : 'Timeline'}
      >
        {group || resource ? (
          <p>
            <Uid uid={group || resource} />
          </p>
        ) : (
          <p>Open a timeline from a group or an object, or give a group uid.</p>
        )}
        <ErrorBox error={page.error} />
        {page.data ? (
          <>
            <p class="count">{page.data.totalCount} events</p>
            <ol class="timeline">
              {page.data.items.map((ev) => (
                <li key={ev.id}>
                  <time dateTime={ev.time}>{ev.time}</time> <strong>{ev.operation}</strong>{' '}
                  {ev.resourceType}{' '}
                  <a href={href('audit', '', { resource: ev.resourceUid })}>
                    <Uid uid={ev.resourceUid} />
                  </a>{' '}
                  by <span class="actor">{ev.actor}</span> via {ev.door}
                  {ev.changedFields?.length ? <> (changed: {ev.changedFields.join(', ')})</> : null}
                  <span class="event-type"> {ev.eventType}</span>
                </li>
              ))}
            </ol>
            <div class="pager">
              <button
                type="button"
                disabled={tokens.length === 0}
                onClick={() => setTokens(tokens.slice(0, -1))}
              >
                Newer
              </button>
              <button
                type="button"
                disabled={!page.data.nextPageToken}
                onClick={() =>
                  page.data?.nextPageToken && setTokens([...tokens, page.data.nextPageToken])
                }
              >
                Older
              </button>
            </div>
          </>
        ) : null}
      </Section>
    </div>
  );
}
