// "Did you mean …?": the command whose id is closest to what was typed (edit distance per word,
// so "tenant list" finds "tenants list" and "sned" finds "send").

export function editDistance(a: string, b: string): number {
  const previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i++) {
    let diagonal = previous[0];
    previous[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const above = previous[j];
      previous[j] = a[i - 1] === b[j - 1] ? diagonal : 1 + Math.min(diagonal, previous[j], previous[j - 1]);
      // A swap of two neighbours ("sned") counts as one edit, as people make it.
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        previous[j] = Math.min(previous[j], diagonal);
      diagonal = above;
    }
  }
  return previous[b.length];
}

/** The closest command id (oclif form, colons), or undefined when nothing is near enough. */
export function closestCommand(typed: string, ids: string[]): string | undefined {
  const words = typed
    .toLowerCase()
    .split(/[:\s]+/)
    .filter(Boolean);
  let best: { id: string; score: number } | undefined;
  for (const id of ids) {
    const parts = id.split(':');
    if (parts.length < words.length) continue;
    // Compare word by word; a typed topic alone ("tenant") is compared with the topic.
    const score =
      words.reduce((sum, word, index) => sum + editDistance(word, parts[index]), 0) + (parts.length - words.length) * 2;
    if (!best || score < best.score) best = { id, score };
  }
  const length = words.join('').length;
  return best && best.score <= Math.max(2, Math.ceil(length / 3)) ? best.id : undefined;
}
