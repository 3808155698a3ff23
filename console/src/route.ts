import { useEffect, useState } from 'preact/hooks';

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
  const [route, setRoute] = useState(() => parseRoute(location.hash));
  useEffect(() => {
    const on = () => setRoute(parseRoute(location.hash));
    addEventListener('hashchange', on);
    return () => removeEventListener('hashchange', on);
  }, []);
  return route;
}

export function go(target: string): void {
  location.hash = target.replace(/^#/, '');
}
