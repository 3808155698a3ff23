import { clearToken, getToken } from './auth';

/**
 * The console's one way to the server: the public REST API with the person's own bearer
 * token, same origin. Nothing here is privileged: it is what curl with that token can do.
 */

/** A refusal as the API words it: the google.rpc code name, its reason and its message. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    /** e.g. `PERMISSION_DENIED`, from the ErrorInfo detail. */
    readonly code: string,
    message: string,
    /** e.g. `RESOURCE_NOT_EMPTY`, from a PreconditionFailure violation. */
    readonly reason?: string,
  ) {
    super(message);
  }
}

interface StatusBody {
  code?: number;
  message?: string;
  details?: Array<{ '@type'?: string; reason?: string; violations?: Array<{ type?: string }> }>;
}

const CODE_NAMES = [
  'OK',
  'CANCELLED',
  'UNKNOWN',
  'INVALID_ARGUMENT',
  'DEADLINE_EXCEEDED',
  'NOT_FOUND',
  'ALREADY_EXISTS',
  'PERMISSION_DENIED',
  'RESOURCE_EXHAUSTED',
  'FAILED_PRECONDITION',
  'ABORTED',
  'OUT_OF_RANGE',
  'UNIMPLEMENTED',
  'INTERNAL',
  'UNAVAILABLE',
  'DATA_LOSS',
  'UNAUTHENTICATED',
];

export function errorOf(status: number, body: unknown): ApiError {
  const b = (typeof body === 'object' && body !== null ? body : {}) as StatusBody;
  const info = b.details?.find((d) => d['@type']?.endsWith('google.rpc.ErrorInfo'));
  const pre = b.details?.find((d) => d['@type']?.endsWith('google.rpc.PreconditionFailure'));
  const code = info?.reason ?? CODE_NAMES[b.code ?? -1] ?? `HTTP ${status}`;
  const message = typeof b.message === 'string' ? b.message : `The server answered ${status}.`;
  return new ApiError(status, code, message, pre?.violations?.[0]?.type);
}

/** Listeners told when the server no longer accepts the token (401), given that token. */
const signedOut = new Set<(refused: string) => void>();
export function onSignedOut(f: (refused: string) => void): () => void {
  signedOut.add(f);
  return () => signedOut.delete(f);
}

/** @throws ApiError for any answer that is not 2xx. */
export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  const token = getToken();
  if (token) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(path, {
    method,
    headers,
    credentials: 'omit',
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  let parsed: unknown = undefined;
  try {
    parsed = text === '' ? undefined : JSON.parse(text);
  } catch {
    /* not JSON: a proxy's page */
  }
  if (!res.ok) {
    if (res.status === 401 && token) {
      clearToken();
      signedOut.forEach((f) => f(token));
    }
    throw errorOf(res.status, parsed);
  }
  return parsed as T;
}

export const get = <T>(path: string) => api<T>('GET', path);
export const post = <T>(path: string, body: unknown) => api<T>('POST', path, body);
export const patch = <T>(path: string, body: unknown) => api<T>('PATCH', path, body);
export const del = <T>(path: string) => api<T>('DELETE', path);

/** `path?k=v&…`, leaving out empty values. */
export function withQuery(path: string, q: Record<string, string | number | undefined>): string {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(q)) if (v !== undefined && v !== '') p.set(k, String(v));
  const s = p.toString();
  return s ? `${path}?${s}` : path;
}

export interface Page<T> {
  items: T[];
  nextPageToken?: string;
  totalCount: string;
}

/** One page of a list answer, whatever its plural key is. */
export async function listPage<T>(
  path: string,
  plural: string,
  q: Record<string, string | number | undefined>,
): Promise<Page<T>> {
  const r = await get<Record<string, unknown>>(withQuery(path, q));
  return {
    items: (r[plural] as T[] | undefined) ?? [],
    ...(typeof r.nextPageToken === 'string' ? { nextPageToken: r.nextPageToken } : {}),
    totalCount: typeof r.totalCount === 'string' ? r.totalCount : '0',
  };
}
