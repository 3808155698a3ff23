import { Picker, usePicked, type PickKind } from './picker';
import { go, href } from './route';

/**
 * A view's filters, kept in its address (`#/<view>?<query>`): each is read from `query`,
 * changed with `set`, and its form control is named `<view>-<param>`.
 */
export interface Filters {
  view: string;
  query: URLSearchParams;
  /** Goes to the same view with `k` set to `v` (left out when empty) and the rest kept. */
  set: (k: string, v: string | undefined) => void;
}

/** The filters of `view` in its address's `query`. */
export function filtersOf(view: string, query: URLSearchParams): Filters {
  return {
    view,
    query,
    set: (k, v) => {
      const q: Record<string, string | undefined> = Object.fromEntries(query.entries());
      q[k] = v;
      go(href(view, '', q));
    },
  };
}

/** A filter by a group or an identity, picked by name, kept in the address as `param`. */
export function PickFilter(props: {
  filters: Filters;
  param: string;
  kind: PickKind;
  label: string;
}) {
  const { filters, param } = props;
  const [value] = usePicked(props.kind, filters.query.get(param) ?? '');
  return (
    <Picker
      kind={props.kind}
      label={props.label}
      name={`${filters.view}-${param}`}
      value={value}
      onPick={(p) => p && filters.set(param, p.uid)}
    />
  );
}

/** The filter by a group, which takes in everything below it too. */
export function GroupFilter({ filters }: { filters: Filters }) {
  return (
    <PickFilter filters={filters} param="group" kind="group" label="Group (and everything below)" />
  );
}

/** A filter chosen from a few `options` (value and words), kept in the address as `param`. */
export function SelectFilter(props: {
  filters: Filters;
  param: string;
  label: string;
  options: Array<[string, string]>;
}) {
  const { filters, param } = props;
  return (
    <label class="field">
      <span>{props.label}</span>
      <select
        name={`${filters.view}-${param}`}
        value={filters.query.get(param) ?? ''}
        onChange={(e) => filters.set(param, (e.currentTarget as HTMLSelectElement).value)}
      >
        {props.options.map(([value, words]) => (
          <option key={value} value={value}>
            {words}
          </option>
        ))}
      </select>
    </label>
  );
}
