import { readFileSync, readdirSync } from 'node:fs';
import test, { type ExecutionContext } from 'ava';
import fc from 'fast-check';
import { parseAllDocuments } from 'yaml';
import { isValidUidp } from '../../src/core/uidp.js';
import { identitySchemas } from '../../src/resources/identities/identity-input.js';
import { MAX_PATTERN_LENGTH } from '../../src/resources/identities/identity.js';
import type {
  ClaimMatchSpec,
  GroupSpec,
  IdentitySpec,
  NamespaceAuthoritySpec,
  RoleBindingSpec,
} from '../../src/reconciler/resources.js';
import { descriptionSchema, NAME_PATTERN, nameSchema } from '../../src/resources/validate.js';

/**
 * The CRDs are hand-written YAML; these tests pin them to the service's rules and to the
 * reconciler's TypeScript types so neither can drift without a failing test.
 */
const root = new URL('../../crds/', import.meta.url);
const load = (file: string): any =>
  parseAllDocuments(readFileSync(new URL(file, root), 'utf8'))[0]!.toJS();
const crds = {
  Group: load('groups.arbor.dev.yaml'),
  Identity: load('identities.arbor.dev.yaml'),
  RoleBinding: load('rolebindings.arbor.dev.yaml'),
};
const authorityCrd = load('namespaceauthorities.arbor.dev.yaml');
const specOf = (crd: any) => crd.spec.versions[0].schema.openAPIV3Schema.properties.spec;

// Record<keyof T, true> makes tsc fail when a key is missing here or is not in T.
const groupKeys: Record<keyof GroupSpec, true> = {
  name: true,
  description: true,
  parentRef: true,
  parentUid: true,
  deletionPolicy: true,
  adoptUid: true,
};
const identityKeys: Record<keyof IdentitySpec, true> = {
  groupRef: true,
  groupUid: true,
  name: true,
  description: true,
  claimMatch: true,
  deletionPolicy: true,
  adoptUid: true,
};
const claimKeys: Record<keyof ClaimMatchSpec, true> = {
  issuer: true,
  subject: true,
  issuerPattern: true,
  subjectPattern: true,
  audience: true,
  claims: true,
};
const bindingKeys: Record<keyof RoleBindingSpec, true> = {
  groupRef: true,
  groupUid: true,
  identityRef: true,
  identityUid: true,
  role: true,
  roleUid: true,
  expireTime: true,
  notBefore: true,
  condition: true,
  deletionPolicy: true,
  adoptUid: true,
};

const sorted = (o: object) => Object.keys(o).sort();

test('crd schema: spec properties are exactly the reconciler types', (t) => {
  t.deepEqual(sorted(specOf(crds.Group).properties), sorted(groupKeys));
  t.deepEqual(sorted(specOf(crds.Identity).properties), sorted(identityKeys));
  t.deepEqual(sorted(specOf(crds.RoleBinding).properties), sorted(bindingKeys));
  const claim = specOf(crds.Identity).properties.claimMatch.properties;
  t.deepEqual(sorted(claim), sorted(claimKeys));
});

test('crd schema: name fields use the service pattern and length', (t) => {
  const names = [
    specOf(crds.Group).properties.name,
    specOf(crds.Identity).properties.name,
    specOf(crds.RoleBinding).properties.role,
  ];
  for (const n of names) {
    t.is(n.pattern, NAME_PATTERN.source);
    t.is(n.maxLength, 63);
  }
  t.true(nameSchema.safeParse('a'.repeat(63)).success);
  t.false(nameSchema.safeParse('a'.repeat(64)).success);
});

test('crd schema: description length matches the service', (t) => {
  for (const crd of [crds.Group, crds.Identity])
    t.is(specOf(crd).properties.description.maxLength, 512);
  t.true(descriptionSchema.safeParse('d'.repeat(512)).success);
  t.false(descriptionSchema.safeParse('d'.repeat(513)).success);
});

const HEX = '0123456789abcdef';
const hexOf = (n: number) =>
  fc.string({ unit: fc.constantFrom(...HEX), minLength: n, maxLength: n });
/** A valid uid path: a root and zero to three levels below it. */
const validUid = fc
  .tuple(hexOf(40), fc.array(hexOf(16), { maxLength: 3 }))
  .map(([root, levels]) => [root, ...levels].join('/'));
/**
 * A valid uid path with one mutation (a character changed, dropped or added; a level cut
 * short or grown), or left valid: strings a pattern must tell apart from a uid by one
 * character, which `fc.string()` practically never produces.
 */
const nearUid = fc.oneof(
  validUid,
  fc
    .tuple(
      validUid,
      fc.nat(),
      fc.constantFrom(...'0aAfFgz/-_ .\n'),
      fc.constantFrom('set', 'drop', 'add'),
    )
    .map(([u, i, c, how]) => {
      const at = i % (u.length + 1);
      if (how === 'set') return u.slice(0, at) + c + u.slice(at + 1);
      if (how === 'drop') return u.slice(0, at) + u.slice(at + 1);
      return u.slice(0, at) + c + u.slice(at);
    }),
);

/** `property` holds over near-uids, and they were both valid and invalid often enough. */
function overNearUids(t: ExecutionContext, property: (s: string) => boolean): void {
  let valid = 0;
  let invalid = 0;
  fc.assert(
    fc.property(nearUid, (s) => {
      if (isValidUidp(s)) valid++;
      else invalid++;
      return property(s);
    }),
    { numRuns: 500 },
  );
  t.true(valid > 50 && invalid > 50, `valid ${valid}, invalid ${invalid}`);
}

test('crd schema: uid patterns accept exactly the uid paths the service accepts', (t) => {
  const patterns = [
    specOf(crds.Group).properties.parentUid.pattern,
    specOf(crds.Group).properties.adoptUid.pattern,
    specOf(crds.Identity).properties.groupUid.pattern,
    specOf(crds.RoleBinding).properties.identityUid.pattern,
    specOf(crds.RoleBinding).properties.roleUid.pattern,
  ].map((p: string) => new RegExp(p));
  const hex = (n: number) =>
    fc.string({ unit: fc.constantFrom(...'0123456789abcdefA/'), minLength: n, maxLength: n });
  const candidate = fc.oneof(
    hex(40),
    fc.tuple(fc.constant('a'.repeat(40)), hex(17)).map(([a, b]) => a + b),
    fc.tuple(fc.constant('b'.repeat(40) + '/'), hex(16)).map(([a, b]) => a + b),
    fc.string(),
  );
  fc.assert(fc.property(candidate, (s) => patterns.every((re) => re.test(s) === isValidUidp(s))));
  overNearUids(t, (s) => patterns.every((re) => re.test(s) === isValidUidp(s)));
  t.true(patterns.every((re) => re.test(`${'c'.repeat(40)}/${'d'.repeat(16)}`)));
});

test('crd schema: claim match limits match the identity service', (t) => {
  const cm = specOf(crds.Identity).properties.claimMatch.properties;
  t.is(cm.issuerPattern.maxLength, MAX_PATTERN_LENGTH);
  t.is(cm.subjectPattern.maxLength, MAX_PATTERN_LENGTH);
  const { create } = identitySchemas(false);
  const body = (claimMatch: Record<string, unknown>) => ({ name: 'x', claimMatch });
  const issuer = (n: number) => `https://i.example/${'x'.repeat(n - 'https://i.example/'.length)}`;
  t.true(create.safeParse(body({ issuer: issuer(cm.issuer.maxLength), subject: 's' })).success);
  t.false(
    create.safeParse(body({ issuer: issuer(cm.issuer.maxLength + 1), subject: 's' })).success,
  );
  for (const f of ['subject', 'audience'] as const) {
    const ok = { issuer: 'https://i.example', subject: 's', [f]: 'y'.repeat(cm[f].maxLength) };
    t.true(create.safeParse(body(ok)).success, f);
    t.false(create.safeParse(body({ ...ok, [f]: 'y'.repeat(cm[f].maxLength + 1) })).success, f);
  }
  const claims = Object.fromEntries(
    Array.from({ length: cm.claims.maxProperties + 1 }, (_, i) => [`c${i}`, 'v']),
  );
  t.false(create.safeParse(body({ issuer: 'https://i.example', subject: 's', claims })).success);
});

test('crd schema: one-of and required rules mirror the services', (t) => {
  const rules = (s: any) => (s['x-kubernetes-validations'] ?? []).map((r: any) => r.rule as string);
  t.deepEqual(specOf(crds.Identity).required, ['claimMatch']);
  t.true(rules(specOf(crds.Identity)).includes('has(self.groupRef) != has(self.groupUid)'));
  const cmRules = rules(specOf(crds.Identity).properties.claimMatch);
  t.true(cmRules.includes('has(self.issuer) != has(self.issuerPattern)'));
  t.true(cmRules.includes('has(self.subject) != has(self.subjectPattern)'));
  const rb = rules(specOf(crds.RoleBinding));
  for (const [a, b] of [
    ['groupRef', 'groupUid'],
    ['identityRef', 'identityUid'],
    ['role', 'roleUid'],
  ]) {
    t.true(rb.includes(`has(self.${a}) != has(self.${b})`), `${a}/${b}`);
  }
  t.true(rules(specOf(crds.Group)).includes('!(has(self.parentRef) && has(self.parentUid))'));
});

test('crd schema: every CRD is namespaced v1alpha1 with status, columns and short names', (t) => {
  const shortNames = { Group: 'agrp', Identity: 'aid', RoleBinding: 'arb' };
  for (const [kind, crd] of Object.entries(crds)) {
    t.is(crd.spec.group, 'arbor.dev');
    t.is(crd.spec.scope, 'Namespaced');
    t.is(crd.spec.names.kind, kind);
    t.true(crd.spec.names.shortNames.includes(shortNames[kind as keyof typeof shortNames]));
    const [v] = crd.spec.versions;
    t.like(v, { name: 'v1alpha1', served: true, storage: true, subresources: { status: {} } });
    const cols = v.additionalPrinterColumns.filter((c: any) => !c.priority).map((c: any) => c.name);
    t.deepEqual(cols, ['Ready', 'Synced', 'Mode', 'Drifted', 'UID', 'Age']);
    t.deepEqual(specOf(crd).properties.deletionPolicy.enum, ['Delete', 'Orphan']);
    const status = v.schema.openAPIV3Schema.properties.status.properties;
    t.deepEqual(sorted(status), ['conditions', 'mode', 'observedGeneration', 'uid']);
  }
});

test('crd schema: the examples name only kinds and fields the CRDs define', (t) => {
  const dir = new URL('examples/', root);
  const files = readdirSync(dir).filter((f) => f.endsWith('.yaml'));
  t.true(files.length > 0);
  for (const file of files) {
    for (const doc of parseAllDocuments(readFileSync(new URL(file, dir), 'utf8'))) {
      const obj = doc.toJS();
      if (!obj) continue;
      t.is(obj.apiVersion, 'arbor.dev/v1alpha1', file);
      const crd = { ...crds, NamespaceAuthority: authorityCrd }[obj.kind as keyof typeof crds];
      t.truthy(crd, `${file}: ${obj.kind}`);
      const props = specOf(crd).properties;
      for (const key of Object.keys(obj.spec))
        t.truthy(props[key], `${file}: ${obj.kind}.spec.${key}`);
      if (obj.spec.name !== undefined) t.regex(obj.spec.name, NAME_PATTERN);
    }
  }
});

const authorityKeys: Record<keyof NamespaceAuthoritySpec, true> = {
  identityUid: true,
  namespaces: true,
  serviceAccountName: true,
};

test('crd schema: NamespaceAuthority is cluster-scoped and matches its type', (t) => {
  t.is(authorityCrd.spec.scope, 'Cluster');
  t.is(authorityCrd.spec.group, 'arbor.dev');
  t.is(authorityCrd.spec.names.kind, 'NamespaceAuthority');
  const spec = specOf(authorityCrd);
  t.deepEqual(sorted(spec.properties), sorted(authorityKeys));
  t.deepEqual(spec.required, ['identityUid', 'namespaces']);
  t.is(spec.properties.serviceAccountName.default, 'arbor');
  // An identity always hangs under a group: a flat (organization) uid is no identity.
  const uid = new RegExp(spec.properties.identityUid.pattern);
  t.true(uid.test(`${'a'.repeat(40)}/${'b'.repeat(16)}`));
  t.false(uid.test('a'.repeat(40)));
  overNearUids(t, (s) => uid.test(s) === (isValidUidp(s) && s.includes('/')));
});
