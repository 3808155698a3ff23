import { windowSpan, windowText } from './time';

/**
 * A binding's window in a table cell: where it stands in words ("starts in 2 hours",
 * "expires in 3 days"), its ends in local time in the title. One cell for every binding
 * table, so a scheduled binding never reads as live anywhere.
 */
export function BindingWindow({ b }: { b: { notBefore?: string; expireTime?: string } }) {
  const at =
    b.notBefore !== undefined && Date.parse(b.notBefore) > Date.now() ? b.notBefore : b.expireTime;
  const span = windowSpan(b);
  return at === undefined ? (
    <span>{windowText(b)}</span>
  ) : (
    <time dateTime={at} title={span}>
      {windowText(b)}
    </time>
  );
}
