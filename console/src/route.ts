import { useEffect, useMemo, useState } from 'preact/hooks';

/** Where the console is: `#/<view>/<arg>?<query>`. Hash routes need no server routes. */
export interface Route {
  view: string;
  arg: string;
  /** The part after the uid on a group page (`#/groups/<uid>/<tab>`), else empty. */
  tab: string;
  query: URLSearchParams;
}

export function parseRoute(hash: string): Route {
  const h = hash.replace(/^#\/?/, '');
  const [path = '', qs = ''] = h.split('?', 2);
  const [view = '', ...rest] = path.split('/');
  // A group page's uid is one encoded segment and its tab the next; elsewhere the rest is
  // the argument, so an address typed with the uid's slashes raw still works.
  const paged = view === 'groups';
  return {
    view: view || 'tree',
    arg: decodeURIComponent(paged ? (rest[0] ?? '') : rest.join('/')),
    tab: paged ? (rest[1] ?? '') : '',
    query: new URLSearchParams(qs),
  };
}

/** A group page, on one of its tabs (`children` when none is named). */
export function groupHref(uid: string, tab = ''): string {
  return `#/groups/${encodeURIComponent(uid)}${tab ? `/${tab}` : ''}`;
}

/** A link target inside the console; every part is encoded (uids carry `/`). */
export function href(
  view: string,
  arg = '',
  query: Record<string, string | undefined> = {},
): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v) q.set(k, v);
  const qs = q.toString();
  return `#/${view}${arg ? `/${encodeURIComponent(arg)}` : ''}${qs ? `?${qs}` : ''}`;
}

export function useRoute(): Route {
  const [hash, setHash] = useState(() => location.hash);
  useEffect(() => {
    const on = () => setHash(location.hash);
    addEventListener('hashchange', on);
    // Effects run after the first paint: a hash set between that render and now (a link
    // followed, or an address typed, at once after sign-in) fired its event before anyone
    // listened. Read it again; an unchanged hash changes no state and renders nothing.
    on();
    return () => removeEventListener('hashchange', on);
  }, []);
  return useMemo(() => parseRoute(hash), [hash]);
}

export function go(target: string): void {
  location.hash = target.replace(/^#/, '');
}
