/** The API address: `--api`, else ARBOR_API_URL, else http://localhost:8080; no trailing slash. */
export function apiAddress(flag: string | undefined): string {
  return (flag ?? process.env.ARBOR_API_URL ?? 'http://localhost:8080').replace(/\/+$/, '');
}
