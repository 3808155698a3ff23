/** The wire shapes the console reads (a subset of `/openapi.json`, written by hand). */
export interface Group {
  uid: string;
  name: string;
  description: string;
  createTime?: string;
}

export interface Named {
  uid: string;
  name: string;
  description: string;
}

export interface Role extends Named {
  capabilities?: string[];
}

export interface ClaimMatch {
  issuer?: string;
  issuerPattern?: string;
  subject?: string;
  subjectPattern?: string;
  audience?: string;
  claims?: Record<string, string>;
}

export interface Identity extends Named {
  claimMatch?: ClaimMatch;
}

export interface RoleBinding {
  uid: string;
  identity: Named;
  group: Named;
  role: Named;
  expireTime?: string;
  /** A scheduled binding: it grants from this instant on. */
  notBefore?: string;
  /** A conditional binding: it grants only on a decision for which the expression holds. */
  condition?: { expression: string; title?: string; description?: string };
}

export const ROOT_UID = /^[0-9a-f]{40}$/;

/** The uids of `uid` and every group above it, top first. */
export function ancestry(uid: string): string[] {
  const parts = uid.split('/');
  return parts.map((_, i) => parts.slice(0, i + 1).join('/'));
}

export function parentOf(uid: string): string | undefined {
  const i = uid.lastIndexOf('/');
  return i < 0 ? undefined : uid.slice(0, i);
}

/** "1 child", "2 children": `many` defaults to `one` + "s". */
export function plural(n: number | string, one: string, many = `${one}s`): string {
  return `${n} ${Number(n) === 1 ? one : many}`;
}

/** What a group is called in sentences. */
export function kindOf(uid: string): 'organization' | 'folder' {
  return ROOT_UID.test(uid) ? 'organization' : 'folder';
}
