// negotiator 1.x: the `preferred` option koa-compress passes is not in @types/negotiator (0.6).
declare module 'negotiator' {
  interface Headers {
    [name: string]: string | string[] | undefined;
  }
  export default class Negotiator {
    constructor(request: { headers: Headers });
    encoding(
      available?: readonly string[],
      opts?: { preferred?: readonly string[] },
    ): string | undefined;
  }
}
