/** Every `-o` format: its own module, so declaring the flag loads no printer (nor yaml). */
export const OUTPUT_FORMATS = ['table', 'wide', 'json', 'yaml', 'name'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];
