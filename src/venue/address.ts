/** An EVM address as the spec writes it (part 1, rule 4): `0x` and 40 hex digits, either case. */
export const ADDRESS_RE = /^0x[0-9a-fA-F]{40}$/;
