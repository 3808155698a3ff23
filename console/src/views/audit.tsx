import { listPage } from '../api';
import { actorUid } from '../names';
import { filtersOf, GroupFilter, PickFilter, SelectFilter } from '../filters';
import { go, href } from '../route';
import { usePaged } from '../paged';
import { ErrorBox, NameOf, CopyUid, Pager, Section } from '../ui';
import { AuditEntry, type AuditEvent } from './audit-entry';

const OPERATIONS = ['create', 'update', 'delete'] as const;
/** The time filter's choices: how far back, in ms. */
const SINCE: Record<string, number> = {
  hour: 3_600_000,
  day: 86_400_000,
  week: 7 * 86_400_000,
  month: 30 * 86_400_000,
};

/** One paged timeline: newest first, 50 a page, "Newer" and "Older". */
export function Timeline(props: { query: Record<string, string> }) {
  const page = usePaged<AuditEvent>(
    (p) =>
      listPage('/audit/v2beta1/events', 'events', { ...props.query, order_by: 'time desc', ...p }),
    [JSON.stringify(props.query)],
  );
  if (page.error) return <ErrorBox error={page.error} />;
  if (!page.data) return <p role="status">Loading…</p>;
  const n = Number(page.data.totalCount);
  return (
    <>
      <p class="count" role="status">
        {n === 1 ? '1 change' : `${n} changes`}
        {n === 0 ? ' you can see match these filters.' : ''}
      </p>
      <ol class="timeline" aria-label="Audit timeline">
        {page.data.items.map((ev) => (
          <AuditEntry key={ev.id} ev={ev} />
        ))}
      </ol>
      <Pager
        tokens={page.tokens}
        setTokens={page.setTokens}
        next={page.data.nextPageToken}
        back="Newer"
        more="Older"
      />
    </>
  );
}

/** The operation filter's choices: any, or one. */
const OPERATION_OPTIONS: Array<[string, string]> = [
  ['', 'any'],
  ...OPERATIONS.map((o) => [o, o] as [string, string]),
];
/** The time filter's choices: any time, or the last hour, day… */
const SINCE_OPTIONS: Array<[string, string]> = [
  ['', 'any time'],
  ...Object.keys(SINCE).map((s) => [s, `in the last ${s}`] as [string, string]),
];

/** The filters, kept in the address: group (and below), actor, operation, since. */
function Filters({ query }: { query: URLSearchParams }) {
  const f = filtersOf('audit', query);
  return (
    <form class="filters" aria-label="Filters" onSubmit={(e) => e.preventDefault()}>
      <GroupFilter filters={f} />
      <PickFilter filters={f} param="actor" kind="identity" label="Changed by" />
      <SelectFilter filters={f} param="operation" label="Operation" options={OPERATION_OPTIONS} />
      <SelectFilter filters={f} param="since" label="When" options={SINCE_OPTIONS} />
      {[...query.keys()].length > 0 ? (
        <button type="button" onClick={() => go(href('audit'))}>
          Clear filters
        </button>
      ) : null}
    </form>
  );
}

/** The API query of the filters in the address (`since` is turned into a start time). */
function apiQuery(query: URLSearchParams): Record<string, string> {
  const q: Record<string, string> = {};
  const group = query.get('group');
  const resource = query.get('resource');
  const actor = query.get('actor');
  const operation = query.get('operation');
  const since = SINCE[query.get('since') ?? ''];
  if (group) q.within = group;
  if (resource) q.resource_uid = resource;
  if (actor) q.actor = actorUid(actor) ? actor : `identity:${actor}`;
  if (operation) q.operation = operation;
  // Rounded to the minute, so the query (and the timeline's key) is stable while shown.
  if (since)
    q.start_time = new Date(Math.floor((Date.now() - since) / 60_000) * 60_000).toISOString();
  return q;
}

/**
 * The audit timeline: one list for a group and everything below it (or one object), by
 * name, in local and relative time, filtered by who, what and when, each change with its
 * before and after.
 */
export function AuditView({ query }: { query: URLSearchParams }) {
  const resource = query.get('resource') ?? '';
  return (
    <div>
      <h1>Audit</h1>
      <Filters query={query} />
      {resource ? (
        <p>
          Only the changes of one object: <CopyUid uid={resource} />{' '}
          <a href={href('audit', '', { group: query.get('group') ?? undefined })}>show all</a>
        </p>
      ) : null}
      {query.get('group') ? (
        <p>
          <NameOf
            kind="group"
            uid={query.get('group')!}
            link={href('group', query.get('group')!)}
          />{' '}
          and everything below it.
        </p>
      ) : null}
      <Section id="timeline-h" title="Timeline">
        <Timeline key={query.toString()} query={apiQuery(query)} />
      </Section>
    </div>
  );
}
