import { useEffect, useId, useRef, useState } from 'preact/hooks';
import { listPage } from './api';
import { capabilities, didYouMean } from './capability-list';
import { nameOf } from './names';
import { CopyUid, ErrorBox } from './ui';

/**
 * Pickers: a person chooses an identity, a group, a role or a capability by name, with
 * type-ahead, and never types or pastes a uid. Groups, identities and roles are searched
 * with the API's `name_prefix` filter (beyond the seed's exact-name filter), so a person
 * sees only what the server lets them list; capabilities come from the API's own catalogue.
 * The chosen thing's uid is shown small, with a copy button.
 */

export type PickKind = 'group' | 'identity' | 'role' | 'capability';

/** What was picked. For a capability, `uid` and `name` are both the capability. */
export interface Picked {
  uid: string;
  name: string;
}

export interface PickerProps {
  kind: PickKind;
  /** The visible label, e.g. "Identity". */
  label: string;
  /** The input's `name` (tests and autofill find it by this). */
  name?: string;
  /** The current choice, or undefined while none is made. */
  value: Picked | undefined;
  /** Called with the choice, and with undefined when the person edits the text again. */
  onPick: (p: Picked | undefined) => void;
  /** Offer only what lies below this group (`uidp.descendants_of`); groups, identities. */
  under?: string;
  required?: boolean;
  placeholder?: string;
}

const PATHS: Record<Exclude<PickKind, 'capability'>, [path: string, plural: string]> = {
  group: ['/iam/v2beta1/groups', 'groups'],
  identity: ['/iam/v2beta1/identities', 'identities'],
  role: ['/iam/v2beta1/roles', 'roles'],
};

const SHOWN = 10;

/** Up to ten things of `kind` whose name starts with `text`, by name. */
export async function searchByName(
  kind: PickKind,
  text: string,
  under?: string,
): Promise<Picked[]> {
  if (kind === 'capability') {
    const all = await capabilities();
    return all
      .filter((c) => c.startsWith(text.trim()))
      .slice(0, 50)
      .map((c) => ({ uid: c, name: c }));
  }
  const [path, plural] = PATHS[kind];
  const page = await listPage<Picked>(path, plural, {
    name_prefix: text.trim(),
    order_by: 'name',
    page_size: SHOWN,
    ...(under && kind !== 'role' ? { 'uidp.descendants_of': under } : {}),
  });
  return page.items.map((x) => ({ uid: x.uid, name: x.name }));
}

/** Loads the options for `text` (debounced) while the list is open; the latest answer wins. */
function useOptions(kind: PickKind, text: string, open: boolean, under?: string) {
  const [state, setState] = useState<{ options: Picked[]; error?: unknown; for?: string }>({
    options: [],
  });
  useEffect(() => {
    if (!open) return;
    let live = true;
    const t = setTimeout(() => {
      searchByName(kind, text, under).then(
        (options) => live && setState({ options, for: text }),
        (error: unknown) => live && setState({ options: [], error, for: text }),
      );
    }, 120);
    return () => {
      live = false;
      clearTimeout(t);
    };
  }, [kind, text, open, under]);
  return state;
}

/** A labelled combobox (WAI-ARIA 1.2 pattern) that offers things by name as one types. */
export function Picker(props: PickerProps) {
  const id = useId();
  const listId = `${id}-list`;
  const [text, setText] = useState(props.value?.name ?? '');
  const [open, setOpen] = useState(false);
  const [active, setActive] = useState(0);
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => setText(props.value?.name ?? ''), [props.value?.uid, props.value?.name]);
  const { options, error, for: answered } = useOptions(props.kind, text, open, props.under);
  const pick = (p: Picked) => {
    setText(p.name);
    setOpen(false);
    props.onPick(p);
  };
  const onKey = (e: KeyboardEvent) => {
    if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      e.preventDefault();
      setOpen(true);
      const n = options.length || 1;
      setActive((a) => (a + (e.key === 'ArrowDown' ? 1 : n - 1)) % n);
    } else if (e.key === 'Enter' && open && options[active]) {
      e.preventDefault();
      pick(options[active]);
    } else if (e.key === 'Escape') setOpen(false);
  };
  const none = open && answered === text && options.length === 0 && !error;
  const hint = props.kind === 'capability' && none ? didYouMean(text) : undefined;
  return (
    <div
      class="picker field"
      ref={box}
      onFocusOut={(e) => {
        if (!box.current?.contains(e.relatedTarget as Node | null)) setOpen(false);
      }}
    >
      <label for={id}>{props.label}</label>
      <input
        id={id}
        type="text"
        role="combobox"
        autocomplete="off"
        name={props.name}
        value={text}
        placeholder={props.placeholder ?? 'type a name'}
        required={props.required}
        aria-autocomplete="list"
        aria-expanded={open}
        aria-controls={listId}
        aria-activedescendant={open && options[active] ? `${id}-o${active}` : undefined}
        onFocus={() => setOpen(true)}
        onInput={(e) => {
          setText((e.currentTarget as HTMLInputElement).value);
          setActive(0);
          setOpen(true);
          if (props.value) props.onPick(undefined);
        }}
        onKeyDown={onKey}
      />
      <ul id={listId} role="listbox" aria-label={`${props.label} choices`} hidden={!open}>
        {open
          ? options.map((o, i) => (
              <li
                key={o.uid}
                id={`${id}-o${i}`}
                role="option"
                aria-selected={i === active}
                class={i === active ? 'active' : undefined}
                onMouseDown={(e) => {
                  e.preventDefault(); // keep focus in the input until the pick is made
                  pick(o);
                }}
              >
                <span class="pick-name">{o.name}</span>
                {o.uid !== o.name ? <code class="uid small">{o.uid}</code> : null}
              </li>
            ))
          : null}
      </ul>
      {none ? (
        <p class="hint" role="status">
          Nothing you can see is named “{text}…”.
          {hint ? (
            <>
              {' '}
              Did you mean{' '}
              <button type="button" class="link" onClick={() => pick({ uid: hint, name: hint })}>
                {hint}
              </button>
              ?
            </>
          ) : null}
        </p>
      ) : null}
      {open ? <ErrorBox error={error} /> : null}
      {props.value && props.value.uid !== props.value.name ? (
        <CopyUid uid={props.value.uid} label={props.value.name} />
      ) : null}
    </div>
  );
}

/**
 * A picker's state that starts from a uid (an address like `#/access?identity=<uid>`): the
 * name is looked up, the uid standing in where the caller cannot read it.
 */
export function usePicked(
  kind: PickKind,
  uid: string,
): [Picked | undefined, (p: Picked | undefined) => void] {
  const [picked, setPicked] = useState<Picked | undefined>(undefined);
  useEffect(() => {
    if (!uid) return setPicked(undefined);
    if (kind === 'capability') return setPicked({ uid, name: uid });
    let live = true;
    setPicked((p) => (p?.uid === uid ? p : { uid, name: '' }));
    void nameOf(kind, uid).then((n) => live && setPicked({ uid, name: n ?? uid }));
    return () => {
      live = false;
    };
  }, [kind, uid]);
  return [picked, setPicked];
}
