import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiError } from './api';
import { useName, type NamedKind } from './names';
import { href } from './route';

/** An API refusal as the API words it: code, reason, message. Text only, like all data. */
export function ErrorBox({ error }: { error: unknown }) {
  if (error === undefined || error === null) return null;
  if (error instanceof ApiError)
    return (
      <p class="error" role="alert">
        <strong class="code">{error.code}</strong>
        {error.reason ? <span class="reason"> ({error.reason})</span> : null}
        {': '}
        <span class="message">{error.message}</span>
      </p>
    );
  return (
    <p class="error" role="alert">
      {error instanceof Error ? error.message : 'Something went wrong.'}
    </p>
  );
}

export interface Loaded<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  reload: () => void;
}

/** Runs `load` whenever `deps` change; the latest answer wins. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): Loaded<T> {
  const [state, setState] = useState<{ data?: T; error?: unknown; loading: boolean }>({
    loading: true,
  });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    setState((s) => ({ ...s, loading: true }));
    load().then(
      (data) => live && setState({ data, loading: false }),
      (error: unknown) => live && setState({ error, loading: false }),
    );
    return () => {
      live = false;
    };
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { data: state.data, error: state.error, loading: state.loading, reload };
}

export function Section(props: { title: string; id: string; children: ComponentChildren }) {
  return (
    <section aria-labelledby={props.id} class="panel">
      <h2 id={props.id} tabIndex={-1}>
        {props.title}
      </h2>
      {props.children}
    </section>
  );
}

/** A labelled text input. */
export function Field(props: {
  label: string;
  value: string;
  onInput: (v: string) => void;
  name?: string;
  placeholder?: string;
  required?: boolean;
}) {
  return (
    <label class="field">
      <span>{props.label}</span>
      <input
        type="text"
        name={props.name}
        value={props.value}
        placeholder={props.placeholder}
        required={props.required}
        onInput={(e) => props.onInput((e.currentTarget as HTMLInputElement).value)}
      />
    </label>
  );
}

/** A button that runs an async action, shows its refusal, and is disabled meanwhile. */
export function useAction(): {
  busy: boolean;
  error: unknown;
  run: (f: () => Promise<void>) => Promise<void>;
  clear: () => void;
} {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  const run = async (f: () => Promise<void>) => {
    setBusy(true);
    setError(undefined);
    try {
      await f();
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, run, clear: () => setError(undefined) };
}

export function Uid({ uid }: { uid: string }) {
  return <code class="uid">{uid}</code>;
}

/**
 * Back and More over a paged list: `tokens` are the page tokens that led to the page shown
 * (empty on the first), `next` the API's nextPageToken. Shown only when there is a way to go.
 */
export function Pager(props: {
  tokens: string[];
  setTokens: (t: string[]) => void;
  next: string | undefined;
  back?: string;
  more?: string;
}) {
  const { tokens, setTokens, next } = props;
  if (tokens.length === 0 && !next) return null;
  return (
    <div class="pager">
      <button
        type="button"
        disabled={tokens.length === 0}
        onClick={() => setTokens(tokens.slice(0, -1))}
      >
        {props.back ?? 'Back'}
      </button>
      <button type="button" disabled={!next} onClick={() => next && setTokens([...tokens, next])}>
        {props.more ?? 'More'}
      </button>
    </div>
  );
}

/** A uid, small, with a button that copies it (a uid is for pasting, not for reading). */
export function CopyUid({ uid, label }: { uid: string; label?: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <span class="copy-uid">
      <Uid uid={uid} />{' '}
      <button
        type="button"
        class="small"
        aria-label={`Copy the uid${label ? ` of ${label}` : ''}`}
        onClick={() =>
          void navigator.clipboard?.writeText(uid).then(
            () => setCopied(true),
            () => setCopied(false),
          )
        }
      >
        {copied ? 'Copied' : 'Copy'}
      </button>
    </span>
  );
}

/** The tab's title follows the view: "<what> · Arbor console". */
export function useTitle(what: string | undefined): void {
  useEffect(() => {
    document.title = what ? `${what} · Arbor console` : 'Arbor console';
  }, [what]);
}

/**
 * A modal question before something is destroyed or access changes: it names what goes
 * (`children`), shows `review` (what the change would do) above its buttons,
 * opens with the focus on its confirm button, and stays open with the API's refusal if the
 * action fails. Escape or Cancel closes it with nothing done. While `pending` (the review
 * is still being worked out) the confirm button keeps the focus but does nothing
 * (`aria-disabled`), so a quick Enter cannot skip the review.
 */
export function ConfirmDialog(props: {
  title: string;
  confirm: string;
  onConfirm: () => Promise<void>;
  onClose: () => void;
  children: ComponentChildren;
  review?: ComponentChildren;
  pending?: boolean;
  /** `danger` (the default) for a delete; `primary` for a change that creates. */
  tone?: 'danger' | 'primary';
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  const button = useRef<HTMLButtonElement>(null);
  const act = useAction();
  useEffect(() => {
    dialog.current?.showModal();
    button.current?.focus();
  }, []);
  const waiting = props.pending === true;
  return (
    <dialog
      ref={dialog}
      class="confirm"
      aria-labelledby="confirm-h"
      onCancel={(e) => {
        e.preventDefault();
        props.onClose();
      }}
    >
      <h2 id="confirm-h">{props.title}</h2>
      <p>{props.children}</p>
      {props.review}
      <ErrorBox error={act.error} />
      <div class="dialog-actions">
        <button
          ref={button}
          type="button"
          class={props.tone === 'primary' ? undefined : 'danger'}
          disabled={act.busy}
          aria-disabled={waiting ? 'true' : undefined}
          onClick={() => {
            if (!waiting) void act.run(props.onConfirm);
          }}
        >
          {props.confirm}
        </button>
        <button type="button" class="secondary" onClick={props.onClose}>
          Cancel
        </button>
      </div>
    </dialog>
  );
}

/**
 * A group, identity or role by name (its uid in the title, for those who need it); the
 * uid itself, small, where the caller may not read the thing. An identity the caller may
 * read leads to its page unless another link is given.
 */
export function NameOf(props: { kind: NamedKind; uid: string; link?: string }) {
  const name = useName(props.kind, props.uid);
  const link =
    props.link ?? (props.kind === 'identity' && name ? href('identity', props.uid) : undefined);
  const body = name ? (
    <span class="name" title={props.uid}>
      {name}
    </span>
  ) : (
    <code class="uid small">{props.uid}</code>
  );
  return link ? <a href={link}>{body}</a> : body;
}
