/** JSON with object keys sorted, so equal content prints equally whatever order it came in. */
export function stableStringify(value: unknown): string {
  return JSON.stringify(value, (_key, member: unknown) => {
    if (member === null || typeof member !== 'object' || Array.isArray(member)) return member;
    const sorted: Record<string, unknown> = {};
    for (const key of Object.keys(member).sort())
      sorted[key] = (member as Record<string, unknown>)[key];
    return sorted;
  });
}
