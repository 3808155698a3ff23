import { z } from 'zod';
import type { JsonSchema, NamedSchema } from './contract.js';

/**
 * The named zod schemas of the document, turned into `#/components/schemas` by zod's own
 * JSON Schema generator (draft 2020-12, the dialect of OpenAPI 3.1). A schema named twice
 * keeps its first name; two schemas under one name are refused.
 */
export class SchemaComponents {
  readonly #registries = {
    input: z.registry<{ id: string }>(),
    output: z.registry<{ id: string }>(),
  };
  readonly #names = new Map<z.ZodType, string>();
  readonly #taken = new Map<string, z.ZodType>();

  /**
   * A `$ref` to the schema.
   * @throws Error when another schema already has the name, or one schema is both input and output.
   */
  ref(s: NamedSchema): { $ref: string } {
    for (const part of s.parts ?? []) this.ref(part);
    const known = this.#names.get(s.schema);
    if (known !== undefined) {
      if (!this.#registries[s.io].has(s.schema))
        throw new Error(`schema ${known} is used as both input and output`);
      return { $ref: `#/components/schemas/${known}` };
    }
    if (this.#taken.has(s.name)) throw new Error(`two schemas are named ${s.name}`);
    this.#taken.set(s.name, s.schema);
    this.#names.set(s.schema, s.name);
    this.#registries[s.io].add(s.schema, { id: s.name });
    return { $ref: `#/components/schemas/${s.name}` };
  }

  /** Every schema referenced so far, by name, sorted. */
  toJson(): Record<string, JsonSchema> {
    const out: Record<string, JsonSchema> = {};
    for (const io of ['input', 'output'] as const) {
      const { schemas } = z.toJSONSchema(this.#registries[io], {
        target: 'draft-2020-12',
        io,
        // Refinements and transforms cannot be said in JSON Schema; the type around them can.
        unrepresentable: 'any',
        uri: (id) => `#/components/schemas/${id}`,
      });
      for (const [name, schema] of Object.entries(schemas)) {
        const { $schema: _s, $id: _i, ...rest } = schema as JsonSchema;
        out[name] = rest;
      }
    }
    return Object.fromEntries(Object.entries(out).sort(([a], [b]) => a.localeCompare(b)));
  }
}
