import { CoreV1Api, type KubeConfig, type V1ObjectMeta } from '@kubernetes/client-node';
import { stableJson } from '../wire/manifest-spec.js';
import type { Observation } from './kind-sync.js';

/**
 * `arbor.dev/mode: observe | enforce`, an annotation (or label) on an object or on its
 * namespace; the object's wins. In observe mode the reconciler writes nothing to Arbor and
 * reports what it would write as the `Drifted` condition and an Event. Any value other than
 * `enforce` observes: a misspelt mode must never write.
 */
export const MODE_KEY = 'arbor.dev/mode';

export type Mode = 'observe' | 'enforce';

function modeIn(meta: V1ObjectMeta | undefined): Mode | undefined {
  const v = meta?.annotations?.[MODE_KEY] ?? meta?.labels?.[MODE_KEY];
  if (v === undefined) return undefined;
  return v.trim() === 'enforce' ? 'enforce' : 'observe';
}

/** The mode each namespace asks for, read from the Namespace object, kept for a few seconds. */
export class NamespaceModes {
  private readonly api: CoreV1Api;
  private readonly cache = new Map<string, { mode: Mode | undefined; at: number }>();

  constructor(
    kc: KubeConfig,
    private readonly ttlMs = 5_000,
  ) {
    this.api = kc.makeApiClient(CoreV1Api);
  }

  /** @throws the Kubernetes API's error (the reconcile is retried: never a silent enforce). */
  async of(namespace: string): Promise<Mode | undefined> {
    const hit = this.cache.get(namespace);
    if (hit && Date.now() - hit.at < this.ttlMs) return hit.mode;
    const ns = await this.api.readNamespace({ name: namespace });
    const mode = modeIn(ns.metadata);
    this.cache.set(namespace, { mode, at: Date.now() });
    return mode;
  }
}

/** The object's mode: its own annotation or label, else its namespace's, else enforce. */
export async function modeOf(
  meta: V1ObjectMeta & { namespace: string },
  namespaces: NamespaceModes | undefined,
): Promise<Mode> {
  return modeIn(meta) ?? (await namespaces?.of(meta.namespace)) ?? 'enforce';
}

const short = (v: unknown) => {
  const s = typeof v === 'string' ? JSON.stringify(v) : stableJson(v);
  return s.length > 80 ? `${s.slice(0, 77)}...` : s;
};

/** The Drifted condition's message: the write that was not made, field by field. */
export function driftMessage(o: Observation): string {
  const parts: string[] = [];
  if (o.action === 'update') {
    parts.push(
      `would update ${o.fields.map((f) => `${f.field}: ${short(f.from)} → ${short(f.to)}`).join('; ')}`,
    );
  } else if (o.action) {
    const fields = Object.entries(o.create ?? {})
      .filter(([, v]) => v !== undefined && v !== '')
      .map(([k, v]) => `${k}: ${short(v)}`)
      .join('; ');
    parts.push(
      `would ${o.action === 'create' ? 'create' : 'create again (missing in Arbor)'} ${fields}`,
    );
  }
  if (o.access) parts.push(`access: ${o.access}`);
  return parts.join('; ');
}
