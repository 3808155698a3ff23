import { useEffect, useMemo, useState } from 'preact/hooks';

/** Where the console is: `#/<view>/<arg>?<query>`. Hash routes need no server routes. */
export interface Route {
  view: string;
  arg: string;
  query: URLSearchParams;
}

export function parseRoute(hash: string): Route {
  const h = hash.replace(/^#\/?/, '');
  const [path = '', qs = ''] = h.split('?', 2);
  const [view = '', ...rest] = path.split('/');
  return {
    view: view || 'tree',
    arg: decodeURIComponent(rest.join('/')),
    query: new URLSearchParams(qs),
  };
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
