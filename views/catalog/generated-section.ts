/**
 * `page` with the text between its `begin` and `end` markers replaced by `body`: the docs'
 * generated sections (family tables, OTLP naming) are rewritten this way by `npm run docs`, and
 * their tests compare a page with its regenerated self.
 */
export function withGeneratedSection(page: string, begin: string, end: string, body: string): string {
  const start = page.indexOf(begin);
  const stop = page.indexOf(end);
  if (start < 0 || stop < start) throw new Error(`the page has no ${begin} … ${end} section`);
  return `${page.slice(0, start + begin.length)}\n${body}\n${page.slice(stop)}`;
}
