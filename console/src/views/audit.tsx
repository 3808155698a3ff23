import { useState } from 'preact/hooks';
import { listPage, type Page } from '../api';
import { go, href } from '../route';
import { ErrorBox, Field, Pager, Section, Uid, useLoad } from '../ui';

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

/** One paged timeline: newest first, 50 a page, "Older" and "Newer". */
function Timeline(props: { id: string; title: string; query: Record<string, string> }) {
  const [tokens, setTokens] = useState<string[]>([]);
  const token = tokens[tokens.length - 1];
  const key = JSON.stringify(props.query);
  const page = useLoad<Page<AuditEvent>>(
    () =>
      listPage<AuditEvent>('/audit/v2beta1/events', 'events', {
        ...props.query,
        order_by: 'time desc',
        page_size: 50,
        page_token: token,
      }),
    [key, token],
  );
  return (
    <Section id={props.id} title={props.title}>
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
          <Pager
            tokens={tokens}
            setTokens={setTokens}
            next={page.data.nextPageToken}
            back="Newer"
            more="Older"
          />
        </>
      ) : null}
    </Section>
  );
}

/**
 * The audit timeline of one object (`resource`), or of a group: its own entries, then
 * everything below it (`uidp.descendants_of`, which leaves the group itself out).
 */
export function AuditView({ query }: { query: URLSearchParams }) {
  const group = query.get('group') ?? '';
  const resource = query.get('resource') ?? '';
  const [text, setText] = useState(group || resource);
  return (
    <div>
      <h1>Audit</h1>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          go(href('audit', '', { group: text }));
        }}
      >
        <Field label="Group uid" name="audit-group" value={text} onInput={setText} required />
        <button type="submit">Show its timeline</button>
      </form>
      {group || resource ? (
        <p>
          <Uid uid={group || resource} />
        </p>
      ) : (
        <p>Open a timeline from a group or an object, or give a group uid.</p>
      )}
      {group ? (
        <>
          <Timeline
            key={`below:${group}`}
            id="below-h"
            title="Everything in the group"
            query={{ 'uidp.descendants_of': group }}
          />
          <Timeline
            key={`self:${group}`}
            id="self-h"
            title="The group itself"
            query={{ resource_uid: group }}
          />
        </>
      ) : resource ? (
        <Timeline
          key={resource}
          id="object-h"
          title="This object"
          query={{ resource_uid: resource }}
        />
      ) : null}
    </div>
  );
}
