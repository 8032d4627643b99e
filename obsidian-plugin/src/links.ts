// Where a hit opens. The daemon gives wiki links ("[[Garden plan#Budget|alias]]"); Obsidian's
// openLinkText wants the inside without the alias ("Garden plan#Budget").
import type { Hit } from "./types";

/** The link text inside `[[...]]`, alias dropped; a bare target is returned as it is. */
export function linktextOf(link: string): string {
	let inner = link.trim();
	if (inner.startsWith("!")) inner = inner.slice(1);
	if (inner.startsWith("[[") && inner.endsWith("]]")) inner = inner.slice(2, -2);
	const bar = inner.indexOf("|");
	if (bar >= 0) inner = inner.slice(0, bar);
	return inner.trim();
}

/** A vault path as link text: "Memory/Facts/Tea.md" → "Memory/Facts/Tea". */
export function pathLinktext(path: string): string {
	return path.replace(/\.md$/i, "");
}

/**
 * The link text a hit opens at: a passage of the person's own note (or a session chunk)
 * opens at its heading or block, `sources[0]`; a memory opens as its own note, `path`
 * (its sources are the turns it came from, shown separately).
 */
export function openTarget(hit: Pick<Hit, "type" | "path" | "sources">): string {
	const first = hit.sources?.[0];
	if ((hit.type === "note" || hit.type === "session") && first) return linktextOf(first);
	return pathLinktext(hit.path);
}

/** A short label for a link: "Sessions/2026-12-03 chat#^m-4" → "2026-12-03 chat#^m-4". */
export function linkLabel(link: string): string {
	const text = linktextOf(link);
	const slash = text.lastIndexOf("/", text.indexOf("#") >= 0 ? text.indexOf("#") : text.length);
	return slash >= 0 ? text.slice(slash + 1) : text;
}
