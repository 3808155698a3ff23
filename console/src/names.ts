import { useEffect, useState } from 'preact/hooks';
import { get } from './api';

/**
 * Names for the uids the API answers with (access answers, audit records): one GET per
 * uid, remembered for the session. Where the caller may not read the thing, or it is gone,
 * the uid stands in for its name: nothing is learned that a GET would not tell.
 */
export type NamedKind = 'group' | 'identity' | 'role';

const PATHS: Record<NamedKind, string> = {
  group: '/iam/v2beta1/groups/',
  identity: '/iam/v2beta1/identities/',
  role: '/iam/v2beta1/roles/',
};

const known = new Map<string, Promise<string | undefined>>();

/** The name of `uid`, or undefined where the caller cannot read it. */
export function nameOf(kind: NamedKind, uid: string): Promise<string | undefined> {
  const key = `${kind}:${uid}`;
  let p = known.get(key);
  if (!p) {
    p = get<{ name?: string }>(`${PATHS[kind]}${uid}`).then(
      (x) => x.name || undefined,
      () => undefined,
    );
    known.set(key, p);
  }
  return p;
}

/** Forget a name (after a rename the console made itself: views/group-actions.tsx). */
export function forgetName(kind: NamedKind, uid: string): void {
  known.delete(`${kind}:${uid}`);
}

/** `nameOf` as a hook: undefined while loading or unreadable. */
export function useName(kind: NamedKind, uid: string | undefined): string | undefined {
  const [name, setName] = useState<string | undefined>(undefined);
  useEffect(() => {
    let live = true;
    setName(undefined);
    if (uid) void nameOf(kind, uid).then((n) => live && setName(n));
    return () => {
      live = false;
    };
  }, [kind, uid]);
  return name;
}

/** What an actor string (`identity:<uid>`, `admin`, `system:<name>`) says, by name. */
export function actorUid(actor: string): string | undefined {
  return actor.startsWith('identity:') ? actor.slice('identity:'.length) : undefined;
}
